#!/usr/bin/env python3
"""Summarises an `ncu --section SourceCounters --page source --print-source sass --csv`
export: stall reasons, executed instructions and stall samples by opcode, the top
instructions by samples, and samples per block of BLOCK instructions (with executed
instructions per warp-chunk: 262144 warp-chunks for both kernels profiled here).
usage: summarize_source_counters.py FILE.csv TOP BLOCK"""
import csv,sys,re,collections
rows=[]
with open(sys.argv[1]) as f:
    lines=f.read().split('\n')
i=[k for k,l in enumerate(lines) if l.startswith('"Address"')][0]
r=csv.reader(lines[i:])
hdr=next(r)
H={h:k for k,h in enumerate(hdr)}
for row in r:
    if len(row)<len(hdr): continue
    def num(x):
        try: return float(x.replace(',',''))
        except: return 0.0
    d={'addr':int(row[H['Address']],16) if row[H['Address']].startswith('0x') else int(row[H['Address']]),'src':row[H['Source']],
       'samp':num(row[H['Warp Stall Sampling (All Samples)']]),'exe':num(row[H['Instructions Executed']])}
    for h in hdr:
        if h.startswith('stall_') and '(Not' not in h: d[h]=num(row[H[h]])
    rows.append(d)
tot=sum(d['samp'] for d in rows); ex=sum(d['exe'] for d in rows)
print('instructions',len(rows),'samples',tot,'executed',ex)
# barriers and loop structure
bars=[d['addr'] for d in rows if 'BAR.SYNC' in d['src']]
print('BAR at',[hex(b) for b in bars])
# stall totals
st=collections.Counter()
for d in rows:
    for k,v in d.items():
        if k.startswith('stall_'): st[k]+=v
print('stalls:',', '.join(f'{k[6:]}={v/tot*100:.1f}%' for k,v in st.most_common(10)))
# classify: executed per opcode weighted
op=collections.Counter(); ops=collections.Counter()
for d in rows:
    m=re.match(r'\s*(@!?U?P\w+\s+)?([A-Z0-9]+)',d['src']); o=m.group(2) if m else '?'
    op[o]+=d['exe']; ops[o]+=d['samp']
print('exec by op:',', '.join(f'{k}={v/ex*100:.1f}%' for k,v in op.most_common(14)))
print('samples by op:',', '.join(f'{k}={v/tot*100:.1f}%' for k,v in ops.most_common(14)))
top=sorted(rows,key=lambda d:-d['samp'])[:int(sys.argv[2]) if len(sys.argv)>2 else 25]
for d in top:
    s=sorted(((v,k) for k,v in d.items() if k.startswith('stall_')),reverse=True)[:3]
    print(hex(d['addr']), f"{d['samp']/tot*100:5.2f}%", f"exe={d['exe']:.0f}", d['src'][:60], ' '.join(f'{k[6:]}:{v:.0f}' for v,k in s))
print()
base=rows[0]['addr']
blk=collections.OrderedDict()
for d in rows:
    b=(d['addr']-base)//16//int(sys.argv[3] if len(sys.argv)>3 else 64)
    e=blk.setdefault(b,{'samp':0,'exe':0,'ops':collections.Counter()})
    e['samp']+=d['samp']; e['exe']+=d['exe']
    m=re.match(r'\s*(@!?U?P\w+\s+)?([A-Z0-9]+)',d['src']); e['ops'][m.group(2) if m else '?']+=d['exe']
for b,e in blk.items():
    if e['samp']/tot<0.004: continue
    print(f"{hex(b*16*int(sys.argv[3] if len(sys.argv)>3 else 64))}: {e['samp']/tot*100:5.1f}% samples, exe/warp-chunk {e['exe']/262144:6.1f}  ", ' '.join(f'{k}:{v/262144:.0f}' for k,v in e['ops'].most_common(6)))
