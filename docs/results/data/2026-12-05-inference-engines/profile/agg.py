import json,sys,re,collections
for prec in ("fp32","bf16"):
    d=json.load(open(f'profile/cnnbench_b1.infer_resnet50_v1.5_{prec}_synthetic_batch-1_gpus-0.json'))
    ev=[e for e in (d['traceEvents'] if isinstance(d,dict) else d) if e.get('ph')=='X']
    t=collections.Counter(); n=collections.Counter()
    for e in ev:
        op=e['args'].get('op','')
        k=op.split(':')[0] if op else e['name']
        if k=='conv':
            kh=re.search(r'kh(\d+)',op).group(1); impl=e['args'].get('implementation','')
            k=f"conv {kh}x{kh} {'wino' if 'wino' in impl else ''}"
        t[k]+=e['dur']; n[k]+=1
    tot=sum(t.values())
    print(prec, 'cnnbench total %.0f us'%tot)
    for k,v in t.most_common(): print('  %-20s %3d %8.0f %5.1f%%'%(k,n[k],v,100*v/tot))
