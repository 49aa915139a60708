# Bank conflicts of decode_tc.comp's osh accesses (session 22): the most lanes of a warp's access
# on one of 32 banks (distinct words), plain rows of DIM floats against the swizzle of osh_at.
from collections import Counter
DIM=128; BLOCKS=8
def v_dim(kind, db, j):
    if kind=='q8': return 32*(db//2)+4*(j%8)+2*(db%2)+j//8
    if kind=='rows': return 2*(BLOCKS*(j%8)+db)+j//8
    return 16*db+j
def swz(i, on):
    if not on: return i
    row, d = i//DIM, i%DIM
    return i ^ ((row&7) ^ ((row&6)<<2) ^ (((d>>5)&3)<<3))
def worst(addrs):
    banks=Counter(); seen=set()
    for a in addrs:
        if a in seen: continue
        seen.add(a); banks[a%32]+=1
    return max(banks.values())
def columns(kind, on, wide):
    # the columns' epilogue: rows r0 + (i & 1), r0 = 2c (4 rows: lanes c < 2; wide, 8 rows: all)
    rows, wc = (8 if wide else 4), 0
    for db in range(BLOCKS):
      for i in range(4):
        addrs=[]
        for lane in range(32):
          g,c=lane>>2,lane&3
          if not wide and c>=2: continue
          j=2*c+(i&1); d=v_dim(kind,db,g+8*(i>>1))
          addrs.append(swz((2*rows+j)*DIM+d,on))
        wc=max(wc,worst(addrs))
    return wc
for on in (False, True):
  for kind in ('turbo','rows','q8'):
    # rows16 fold, ROWS=16, slot 1
    w=0
    for nb in range(16):
      for i in range(4):
        addrs=[]
        for lane in range(32):
          g,c=lane>>2,lane&3
          j=g+8*(i>>1); db,x=nb//2,nb%2
          d=v_dim(kind,db,8*x+2*c+(i&1))
          addrs.append(swz((1*16+j)*DIM+d,on))
        w=max(w,worst(addrs))
    # main merge reader: e=tid, j=e//33, k4=e%33, t
    wr=0
    ROWS=12
    for base in range(0,ROWS*33,32):
      for t in range(4):
        addrs=[]
        for e in range(base,min(base+32,ROWS*33)):
          j,k4=e//33,e%33
          if k4==0: continue
          d=4*(k4-1)+t
          addrs.append(swz((0*ROWS+j)*DIM+d,on))
        wr=max(wr,worst(addrs))
    print('swizzle' if on else 'plain  ', kind, 'rows16 fold', w, 'columns', columns(kind, on, False), 'merge reader', wr)
for on in (False, True):
  for kind in ('turbo','rows','q8'):
    print('wide', on, kind, columns(kind, on, True))
