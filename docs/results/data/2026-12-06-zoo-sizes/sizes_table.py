import re,sys,glob
# Side-by-side tables of every report.md under the given folders -> one
# markdown table per mode: model, precision, batch, cnnbench, each peer,
# cnnbench / best peer.
def num(cell):
    m=re.match(r'([0-9.]+)',cell.strip())
    return float(m.group(1)) if m else None
rows=[]
for d in sys.argv[1:]:
    for f in sorted(glob.glob(d+'/**/report.md',recursive=True)):
        cur=None
        for line in open(f):
            m=re.match(r'#### Frameworks side by side: (training|inference) synthetic data, (\w+), batch size (\d+)( per GPU)?$',line.strip())
            if m: cur=(m.group(1),m.group(2),int(m.group(3))); header=None; continue
            if line.startswith('#### '): cur=None; continue
            if cur and line.startswith('| Model'):
                header=[c.strip() for c in line.strip().strip('|').split('|')]; continue
            if cur and line.startswith('| ') and not line.startswith('| ---'):
                cells=[c.strip() for c in line.strip().strip('|').split('|')]
                fws=[h for h in header[2:] if '/' not in h]
                vals={fw:num(cells[2+i]) for i,fw in enumerate(fws)}
                rows.append((cur,cells[0],vals))
for mode in ('training','inference'):
    sel=[r for r in rows if r[0][0]==mode]
    if not sel: continue
    peers=sorted({fw for r in sel for fw in r[2] if fw!='cnnbench'})
    print(f"\n| model | precision | batch | cnnbench | "+" | ".join(peers)+" | cnnbench / best peer |")
    print("| --- | --- | --- | --- | "+" | ".join('---' for _ in peers)+" | --- |")
    for (m,p,b),model,vals in sorted(sel,key=lambda r:(r[0][2],r[1],r[0][1])):
        c=vals.get('cnnbench'); ps=[vals.get(fw) for fw in peers]
        best=max([x for x in ps if x],default=None)
        ratio=f"{c/best:.2f}" if c and best else "-"
        fmt=lambda x: "-" if x is None else (f"{x:.3g}" if x<100 else f"{x:.0f}")
        print(f"| {model} | {p} | {b} | {fmt(c)} | "+" | ".join(fmt(x) for x in ps)+f" | {ratio} |")
