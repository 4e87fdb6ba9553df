#!/usr/bin/env python3
"""rssmap: which code and data of the opsbot executable a running process has resident.

Usage (as root, which /proc/PID/pagemap needs for page frame bits; the present bit is enough here):
    python3 soak/rssmap/rssmap.py PID path/to/opsbot

It reads the executable's mappings from /proc/PID/maps, the present bit of every page from
/proc/PID/pagemap, and sums the resident pages by ELF section (readelf -SW) and, for .text,
.rodata and the data sections, by Go package (`go tool nm -size -sort address`, a page's bytes
shared among the symbols it overlaps). docs/BENCHMARKS.md "The real binary's RSS" records what
it found. A measurement aid, not part of the build or the tests.
"""
import sys, struct, subprocess, bisect, collections, re
pid=int(sys.argv[1]); exe=sys.argv[2]
maps=[]
for l in open(f'/proc/{pid}/maps'):
    f=l.split()
    if len(f)>=6 and f[5].endswith('opsbot'):
        a,b=(int(x,16) for x in f[0].split('-')); maps.append((a,b,f[1]))
pm=open(f'/proc/{pid}/pagemap','rb')
res=[]
for a,b,perm in maps:
    pm.seek(a//4096*8); data=pm.read((b-a)//4096*8)
    for i in range(0,len(data),8):
        v=struct.unpack('<Q',data[i:i+8])[0]
        if v>>63&1: res.append((a+i//8*4096,perm))
# sections
secs=[]
out=subprocess.run(['readelf','-SW',exe],capture_output=True,text=True).stdout
for l in out.splitlines():
    m=re.match(r'\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)',l)
    if m and int(m.group(2),16): secs.append((int(m.group(2),16),int(m.group(3),16),m.group(1)))
secs.sort()
def sec(addr):
    for s,sz,n in secs:
        if s<=addr<s+sz: return n
    return '?'
# symbols
syms=[]
nm=subprocess.run(['go','tool','nm','-size','-sort','address',exe],capture_output=True,text=True).stdout
for l in nm.splitlines():
    f=l.split(None,3)
    if len(f)==4:
        try: syms.append((int(f[0],16),int(f[1]),f[3]))
        except: pass
syms.sort(); starts=[s[0] for s in syms]
def pkg(name):
    n=name
    for p in ('type:.eq.','type:','go:itab.','go:'):
        if n.startswith(p): n=n[len(p):]
    n=n.lstrip('*[]')
    m=re.match(r'((?:[\w.\-]+/)*[\w\-]+)',n)
    p=m.group(1) if m else n
    for k in ('github.com/','golang.org/x/','google.golang.org/','modernc.org/','go.opentelemetry.io/','gopkg.in/'):
        if p.startswith(k):
            parts=p.split('/'); return '/'.join(parts[:3]) if k!='gopkg.in/' else '/'.join(parts[:2])
    return p.split('/')[0] if '.' not in p.split('/')[0] else p
bysec=collections.Counter(); bypkg=collections.Counter(); seckpkg=collections.Counter()
for addr,perm in res:
    s=sec(addr); bysec[s]+=4
    if s in ('.text','.rodata','.noptrdata','.data','.typelink','.itablink'):
        # attribute page bytes to symbols overlapping it
        i=bisect.bisect_right(starts,addr+4096)-1; cov=collections.Counter()
        j=i
        while j>=0 and syms[j][0]+max(syms[j][1],1)>addr and j>i-2000:
            lo=max(syms[j][0],addr); hi=min(syms[j][0]+syms[j][1],addr+4096)
            if hi>lo: cov[pkg(syms[j][2])]+=hi-lo
            j-=1
        tot=sum(cov.values()) or 1
        for k,v in cov.items(): bypkg[(s,k)]+=4*v/tot
print('resident KB by section:'); [print(f'  {k:14} {v:7} KB') for k,v in bysec.most_common()]
print('total', sum(bysec.values()),'KB')
agg=collections.Counter()
for (s,k),v in bypkg.items(): agg[k]+=v
print('by package (text+rodata+data):'); [print(f'  {k:45} {v:8.0f} KB') for k,v in agg.most_common(25)]
for s in ('.text','.rodata'):
    c=collections.Counter({k:v for (ss,k),v in bypkg.items() if ss==s})
    print(s,'top:'); [print(f'  {k:45} {v:8.0f} KB') for k,v in c.most_common(12)]
