import json,glob,sys
for f in sorted(glob.glob(sys.argv[1])):
    d=json.load(open(f))
    for b in d['benchmarks']:
        if b.get('run_type')!='iteration' or b.get('error_occurred'): continue
        t=b.get('step_times_ms',[])
        blocks=' '.join('%.0f'%(sum(t[i:i+25])/25) for i in range(0,len(t),25))
        print(f.split('/')[-1], b['name'].split('/')[2], b.get('repetition_index'), '%.1f img/s p50 %.1f | %s'%(b['images_per_second'], b['latency_ms_p50'], blocks))
