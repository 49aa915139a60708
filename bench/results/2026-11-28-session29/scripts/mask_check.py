# Simulates qr_store_tile's field writes (shaders/quantize_row.glsl) for each token of a tile and
# checks k_new_mask / v_new_mask / norm_new_mask (split-append-4's decode_tc.comp) against them.
import itertools
DIM=128; BLOCKS=DIM//16
for bits in (2,3,4):
    mb=bits-1; F=2*bits; LW=BLOCKS*F//8
    # store: per token t, per (lane, word): bits owned
    def store_bits(is_v, t):
        own={}
        lanes=8 if is_v else 4
        fields=lanes*2*(DIM//16)
        tb=t//8
        for i in range(fields):
            li=i%lanes; blk=i//lanes//2; h=(i//lanes)%2
            if is_v:
                z=t%2; lane=4*li+(t%8)//2; at=F*(4*blk+2*h+tb)
                mask=(((1<<mb)-1)<<(mb*z))|(1<<(2*mb+z))
            else:
                lane=4*(t%8)+li; at=F*(4*blk+2*tb+h); mask=(1<<F)-1
            w=at//32; sh=at%32
            own[(lane,w)]=own.get((lane,w),0)|((mask<<sh)&0xffffffff)
            if sh and (mask>>(32-sh)):
                own[(lane,w+1)]=own.get((lane,w+1),0)|(mask>>(32-sh))
        return own
    def field_part(fm,lo,i): return (fm<<(lo-32*i))&0xffffffff if lo>=32*i else fm>>(32*i-lo)
    def field_in(lo,F,i): return lo<32*i+32 and lo+F>32*i
    def k_new_mask(i,nw,lane):
        g=lane>>2; n0=(nw>>g)&1; n1=(nw>>(g+8))&1; m=0
        for j in range(4*BLOCKS):
            if field_in(F*j,F,i) and (n0 if ((j>>1)&1)==0 else n1): m|=field_part((1<<F)-1,F*j,i)
        return m
    def v_new_mask(i,nw,lane):
        q=lane&3; m=0
        for j in range(4*BLOCKS):
            for e in range(2):
                if field_in(F*j,F,i) and (nw>>(2*q+e+8*(j&1)))&1:
                    m|=field_part((((1<<mb)-1)<<(mb*e))|(1<<(2*mb+e)),F*j,i)
        return m
    import random
    random.seed(bits)
    sets=[1<<t for t in range(16)]+[random.getrandbits(16) for _ in range(200)]+[0xffff,0]
    for is_v in (False,True):
        per_t=[store_bits(is_v,t) for t in range(16)]
        # tokens' bits are disjoint and cover every lane word exactly
        allw={}
        for t in range(16):
            for k,v in per_t[t].items():
                assert allw.get(k,0)&v==0,(bits,is_v,t,k)
                allw[k]=allw.get(k,0)|v
        for (lane,w),v in allw.items(): assert v==0xffffffff or w==LW-1, (bits,is_v,lane,w,hex(v))
        for nw in sets:
            for lane in range(32):
                for i in range(LW):
                    want=0
                    for t in range(16):
                        if (nw>>t)&1: want|=per_t[t].get((lane,i),0)
                    got=(v_new_mask if is_v else k_new_mask)(i,nw,lane)
                    assert got==want,(bits,is_v,hex(nw),lane,i,hex(got),hex(want))
    print("turbo%d: K and V masks match the store's fields (LW %d)"%(bits,LW))
# norms: token t's norm at half 2*(t%8)+(t//8) of word t%8 (16-bit halves)
for nw in range(1<<16):
    for w in range(8):
        want=0
        for t in range(16):
            if (nw>>t)&1 and t%8==w: want|=0xffff<<(16*(t//8))
        got=(0xffff if (nw>>w)&1 else 0)|(0xffff0000 if (nw>>(w+8))&1 else 0)
        assert got==want
print("norms ok")
