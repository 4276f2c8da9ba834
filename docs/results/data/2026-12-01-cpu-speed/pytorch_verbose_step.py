# PyTorch 2.15 (oneDNN 3.13 inside) resnet50 (torchvision: v1.5) training
# steps at batch 32, 2 threads, channels_last, then one step under oneDNN's
# verbose mode: every convolution's implementation and time. Run with the
# peers' venv and glibc malloc tuned as compare.sh does:
#   MALLOC_MMAP_THRESHOLD_=17179869184 MALLOC_TRIM_THRESHOLD_=17179869184 \
#     ~/.cache/cnnbench/peers-venv/bin/python pytorch_verbose_step.py > v.txt
#   grep exec,cpu,convolution v.txt   (pytorch_2.15_onednn_3.13_step_convs.csv: kind,
#   implementation, pass, problem, ms)
import torch, torchvision, time, os, sys
torch.set_num_threads(2)
m = torchvision.models.resnet50().to(memory_format=torch.channels_last)
opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(32,3,224,224).to(memory_format=torch.channels_last); y = torch.randint(0,1000,(32,))
lf = torch.nn.CrossEntropyLoss()
def step():
    opt.zero_grad(set_to_none=True); l = lf(m(x), y); l.backward(); opt.step()
for i in range(3): step()
ts=[]
for i in range(4):
  t=time.time(); step(); ts.append(time.time()-t)
print("steps", ts, file=sys.stderr)
torch._C._set_verbose(1) if hasattr(torch._C,'_set_verbose') else None
with torch.backends.mkldnn.verbose(torch.backends.mkldnn.VERBOSE_ON):
  t=time.time(); step(); print("verbose step", time.time()-t, file=sys.stderr)
