#!/usr/bin/env python3
# Session 20: a check of rows16_split's index algebra (branch tc-rows16, shaders/decode_tc.comp) without a GPU:
# one tile of 16 tokens and 16 rows through emulated m16n8k16 MMAs, with the fragment orders the
# shader header documents (A in the driver's element order, B in mma's own order under KHR, the
# accumulators) and the tile pairs as the columns form reads them; exact values, no hi/lo halves.
# Prints the scores' check and the output's largest error against P V (0.0 when every index agrees).
# It checks the algebra against those documented orders, not the driver: the GPU test does that.
import random
random.seed(1)
class M:
    def __init__(s, r, c, f=None): s.r, s.c = r, c; s.v = [[(f() if f else 0.0) for _ in range(c)] for _ in range(r)]
    def __getitem__(s, ij): return s.v[ij[0]][ij[1]]
    def __setitem__(s, ij, x): s.v[ij[0]][ij[1]] = x
def matmul(A, B):
    C = M(A.r, B.c)
    for i in range(A.r):
        for j in range(B.c): C[i, j] = sum(A[i, k] * B[k, j] for k in range(A.c))
    return C
DIM, BLOCKS, ROWS = 128, 8, 16
g_ = lambda: random.gauss(0, 1)
Q = M(ROWS, DIM, g_); K = M(16, DIM, g_); V = M(16, DIM, g_)
kn = [random.uniform(0.5, 2) for _ in range(16)]; vn = [random.uniform(0.5, 2) for _ in range(16)]
def A_coords(g, c):  # element e -> (row, k)
    return [(g, 2*c), (g, 2*c+1), (g, 2*c+8), (g, 2*c+9), (g+8, 2*c), (g+8, 2*c+1), (g+8, 2*c+8), (g+8, 2*c+9)]
def B_coords(g, c):  # element -> (k, n)
    return [(2*c, g), (2*c+1, g), (2*c+8, g), (2*c+9, g)]
def C_coords(g, c):
    return [(g, 2*c), (g, 2*c+1), (g+8, 2*c), (g+8, 2*c+1)]
def mma(Af, Bf, Cf):  # per-lane fragments -> per-lane result
    A = M(16, 16); B = M(16, 8); C = M(16, 8)
    for lane in range(32):
        g, c = lane >> 2, lane & 3
        for e, (r, k) in enumerate(A_coords(g, c)): A[r, k] = Af[lane][e]
        for e, (k, n) in enumerate(B_coords(g, c)): B[k, n] = Bf[lane][e]
        for e, (r, n) in enumerate(C_coords(g, c)): C[r, n] = Cf[lane][e]
    D = matmul(A, B)
    for i in range(16):
        for j in range(8): D[i, j] += C[i, j]
    return [[D[r, n] for (r, n) in C_coords(lane >> 2, lane & 3)] for lane in range(32)]
# tile pairs: K pair 4blk+r of lane (g,c): token g+8(r>>1), dims 16blk+2c+8(r&1)+{0,1}
def kpair(lane, j):
    g, c = lane >> 2, lane & 3; blk, r = j // 4, j % 4
    t = g + 8*(r >> 1); d = 16*blk + 2*c + 8*(r & 1)
    return (K[t, d], K[t, d+1])
def vpair(lane, j):
    g, c = lane >> 2, lane & 3; blk, r = j // 4, j % 4
    d = 16*blk + g + 8*(r >> 1); t = 2*c + 8*(r & 1)
    return (V[t, d], V[t+1, d])
def normword(arr, w): return (arr[w], arr[w+8])
# Q fragments: coopMatLoad row-major from frag[row*DIM + d]: element (r, k) = Q[r, 16kb + k]
qa = [[[Q[r, 16*kb + k] for (r, k) in A_coords(l >> 2, l & 3)] for l in range(32)] for kb in range(BLOCKS)]
s = [[[0.0]*4 for _ in range(32)] for h in range(2)]
for kb in range(BLOCKS):
    for h in range(2):
        bh = []
        for lane in range(32):
            h0 = kpair(lane, 4*kb + 2*h); h1 = kpair(lane, 4*kb + 2*h + 1)
            bh.append([h0[0], h0[1], h1[0], h1[1]])
        s[h] = mma(qa[kb], bh, s[h])
ref_s = M(ROWS, 16)
for i in range(ROWS):
    for t in range(16): ref_s[i, t] = sum(Q[i, d] * K[t, d] for d in range(DIM)) * kn[t]
P = M(ROWS, 16); ph = [[0.0]*8 for _ in range(32)]
for lane in range(32):
    g, c = lane >> 2, lane & 3
    kn0 = normword(kn, 2*c); kn1 = normword(kn, 2*c+1); vn0 = normword(vn, 2*c); vn1 = normword(vn, 2*c+1)
    for i in range(8):
        h, k, e = i >> 2, (i >> 1) & 1, i & 1
        sc = s[h][lane][2*k + e] * (kn0[h] if e == 0 else kn1[h])
        row, tok = g + 8*k, 8*h + 2*c + e
        assert abs(sc - ref_s[row, tok]) < 1e-9, (lane, i, sc, ref_s[row, tok])
        w = sc * (vn0[h] if e == 0 else vn1[h])  # stand-in for p: any function of the score
        ph[lane][4*k + 2*h + e] = w
        P[row, tok] = w
acc = [[[0.0]*4 for _ in range(32)] for nb in range(2*BLOCKS)]
for db in range(BLOCKS):
    for x in range(2):
        bh = []
        for lane in range(32):
            h0 = vpair(lane, 4*db + 2*x); h1 = vpair(lane, 4*db + 2*x + 1)
            bh.append([h0[0], h0[1], h1[0], h1[1]])
        acc[2*db + x] = mma(ph, bh, acc[2*db + x])
O = matmul(P, V)
out = M(ROWS, DIM)
for nb in range(2*BLOCKS):
    for lane in range(32):
        g, c = lane >> 2, lane & 3
        for i in range(4):
            j = g + 8*(i >> 1); d = 8*nb + 2*c + (i & 1)
            out[j, d] = acc[nb][lane][i]
print("scores ok; output max err", max(abs(out[i, d] - O[i, d]) for i in range(ROWS) for d in range(DIM)))
