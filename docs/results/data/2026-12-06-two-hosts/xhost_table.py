import json, sys, re, collections
D='/work/notes/xhost/'
def load(name):
    r=json.load(open(D+name))
    out={}
    for b in r['benchmarks']:
        if b.get('aggregate_name')!='mean' or b.get('error_occurred'): continue
        out[b['run_name']]=b
    return r['context'], out
setups=[('onehost_shm','one host, shared memory (vader)'),('onehost_tcp','one host, TCP over loopback'),('twohosts_tcp','two hosts (namespaces), TCP over veth')]
coll={s:load(f'coll_{s}.json')[1] for s,_ in setups}
names=sorted(set().union(*[set(c) for c in coll.values()]), key=lambda n:(n.split('/')[0], int(re.search(r'bytes:(\d+)',n).group(1))))
print('| case | ' + ' | '.join(l for _,l in setups) + ' | two hosts / one host TCP |')
print('|---|' + '---|'*(len(setups)+1))
for n in names:
    vals=[coll[s].get(n,{}).get('busbw') for s,_ in setups]
    short=re.sub(r'/mpi/fp32/(sum|none)','',n).replace('/ranks:2','')
    cells=[f'{v/1e9:.2f}' if v else '-' for v in vals]
    ratio=f'{vals[2]/vals[1]:.2f}' if vals[1] and vals[2] else '-'
    print(f'| {short} | ' + ' | '.join(cells) + f' | {ratio} |')
print()
try:
    tr={s:load(f'train_{s}.json')[1] for s,_ in setups}
    names=sorted(set().union(*[set(c) for c in tr.values()]))
    print('| case | ' + ' | '.join(l for _,l in setups) + ' | two hosts / one host shm |')
    print('|---|' + '---|'*(len(setups)+1))
    for n in names:
        key='images_per_second' if n.startswith('train') else 'busbw'
        vals=[tr[s].get(n,{}).get(key) for s,_ in setups]
        f=(lambda v:f'{v:.2f}') if key=='images_per_second' else (lambda v:f'{v/1e9:.2f}')
        cells=[f(v) if v else '-' for v in vals]
        ratio=f'{vals[2]/vals[0]:.2f}' if vals[0] and vals[2] else '-'
        print(f'| {n} ({"images/s" if key=="images_per_second" else "busbw GB/s"}) | ' + ' | '.join(cells) + f' | {ratio} |')
except FileNotFoundError as e:
    print('train: not yet', e)
