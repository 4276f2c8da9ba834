import json,glob,sys,statistics
# Per framework and round: each case's mean images/s over its repetitions and its p50 (ms).
for d in sys.argv[1:]:
  for f in sorted(glob.glob(d+'/*.json')):
    j=json.load(open(f))
    cases={}
    for b in j['benchmarks']:
      if b.get('run_type')!='iteration' or b.get('error_occurred'): continue
      n=b['name'].split('/')
      key=(n[1],n[2],n[4])
      cases.setdefault(key,[]).append((b.get('images_per_second'),b.get('latency_ms_p50')))
    for k,v in sorted(cases.items()):
      ips=[x[0] for x in v if x[0]]; p50=[x[1] for x in v if x[1]]
      if not ips: continue
      print('%-28s %-14s %-5s %-9s img/s mean %7.2f (reps %s) p50 median %.2f' % (f.split('/')[-1], k[0], k[1], k[2], statistics.mean(ips), ' '.join('%.1f'%x for x in ips), statistics.median(p50) if p50 else float('nan')))
