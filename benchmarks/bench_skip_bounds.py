"""How tight could the skipping walk's bound be? A simulation over a whole walk of the fort rules.

    nice -n 19 python benchmarks/bench_skip_bounds.py [PIECES [SAMPLES]]     # default 4 pieces, 2,000 states

The walk is solved as usual (regenerating, two threads, skipping); at each full sweep the values
it starts from and ends with are taken, and for a random sample of states the test of
solver/stochastic/skip.py is replayed with four bounds on how far a state's successors moved: one
for the whole game ("global"), per block of stored states ("P1": the mover's tiles and the other
side's count), per block of two kinds ("P1+P2": those, and the other side's tiles with the
mover's count for a successor where the mover keeps the turn), each with the blocks a state's
successors truly lie in, per key ("keys": the blocks that any state of the same own block reaches
keeping the turn, or of the same other key passing it, as ``skip.BlockSkip`` bounds a state), and
each state's own successors exactly ("exact", the best any test of this kind can do). Two more are unsound by construction, to size what a bound from the typical
movement would buy: the 99th and 99.9th percentiles of each round's movement and full-sweep
change over every 97th state ("q99", "q999"), for which each round also counts the sampled skips
whose kept actions were no longer the best ("wrong_...") and the most such a skip lost
(probability-weighted over the rolls, "harm_..."). A lead is measured against the values the state's full backup read, and a
skip carries it to the next sweep's start by subtracting twice its successors' movement. Each
round prints the share of the sample's codes each bound would generate; the last line sums them
over the walk.
"""
import sys, tempfile, pathlib, json, numpy as np
from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic import skip, _engine as E

K_PIECES = int(sys.argv[1]) if len(sys.argv) > 1 else 4
NS = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
o = UrOptions(pieces=K_PIECES)
K = kernel(o)
n = K.state_count
rng = np.random.default_rng(0)
sample = np.sort(rng.choice(n, NS, replace=False))
M, O = K.unrank(np.arange(n))
pm = np.bitwise_count(M).astype(np.int64); po = np.bitwise_count(O).astype(np.int64)
_, P1 = np.unique(M.astype(np.int64) * 16 + po, return_inverse=True)
_, P2 = np.unique(O.astype(np.int64) * 16 + pm, return_inverse=True)
nb1, nb2 = P1.max() + 1, P2.max() + 1
print("states", n, "P1 blocks", nb1, "P2 blocks", nb2, flush=True)
R = K.roll_count
A1p, A1, A2p, A2 = skip.block_adjacency(K, threads=2)  # the blocks each key's states reach
OWN, key_other = K.keys_of(0, n)  # each state's own block (the partition P1 makes) and other key
key_own, key_other = OWN[sample], key_other[sample]
info = []
for s in sample.tolist():
    rolls = [np.array(sorted(K.roll_outcomes(s, r)), dtype=np.int64) for r in range(R)]
    allc = set()
    for g in K.outcome_groups(s):
        allc.update(g)
    ncodes = sum(len(g) for g in K.outcome_groups(s))
    keep = np.array(sorted(c for c in allc if c >= 0), dtype=np.int64)
    pas = np.array(sorted(-c - 1 for c in allc if c < 0 and c not in (E.WIN, E.LOSS, E.NOCODE)), dtype=np.int64)
    succ = np.concatenate([keep, pas])
    info.append(dict(rolls=rolls, ncodes=ncodes, succ=succ, b1=np.unique(P1[succ]) if len(succ) else succ,
                     b2=np.unique(np.concatenate([P1[pas], -1 - P2[keep]])) if len(succ) else succ))
P = np.array(K.roll_probabilities)

def term(c, V, g):
    out = np.where(c >= 0, g * V[np.clip(c, 0, V.shape[0] - 1)].astype(np.float64), 0.0)
    neg = (c < 0) & (c > E.NOCODE)
    out = np.where(neg, -g * V[np.clip(-c - 1, 0, V.shape[0] - 1)].astype(np.float64), out)
    out = np.where(c == E.WIN, 1.0, np.where(c == E.LOSS, -1.0, out))
    return out

def lead(i, V, g):
    least = np.inf
    for c in info[i]["rolls"]:
        if len(c) < 2:
            continue
        w = np.sort(term(c, V, g))
        least = min(least, w[-1] - w[-2])
    return least

def best_codes(i, V, g):
    """Each roll's best action (an index into its codes), for the mover (the max)."""
    return [int(np.argmax(term(c, V, g))) if len(c) else -1 for c in info[i]["rolls"]]

def loss(i, V, g, kept):
    """What backing up from the kept actions loses against the best ones now (probability-weighted)."""
    out = 0.0
    for r, c in enumerate(info[i]["rolls"]):
        if len(c) < 2:
            continue
        w = term(c, V, g)
        out += P[r] * (w.max() - w[kept[r]])
    return out

codes = np.array([d["ncodes"] for d in info], dtype=np.float64)
variants = ["global", "P1", "P1+P2", "keys", "exact", "q99", "q999"]
Q = {"q99": 0.99, "q999": 0.999}
wrong = {v: 0 for v in Q}
harm = {v: 0.0 for v in Q}
best_at = {v: [None] * NS for v in Q}
ell = {v: np.full(NS, -np.inf) for v in variants}
state = {"W": None, "Wprev": None, "g": None, "gprev": None, "k": -1}
tot = {v: 0.0 for v in variants + ["all"]}
rows = []
ob, oe = skip.Skip.begin, skip.Skip.end
def begin(self, values, discount):
    state["Wprev"], state["gprev"] = state["W"], state["g"]
    state["W"], state["g"] = values.astype(np.float32).copy(), discount
    return ob(self, values, discount)
def end(self, values, change, generated, **kw):
    r = oe(self, values, change, generated, **kw)
    k = self.round
    W, Wp, F, g, gp = state["W"], state["Wprev"], values, state["g"], state["gprev"]
    full = np.abs(F.astype(np.float64) - W)
    qfull = {v: float(np.quantile(full[::97], q)) for v, q in Q.items()}
    f1 = np.zeros(nb1); np.maximum.at(f1, P1, full)
    fk = np.zeros(K.block_count); np.maximum.at(fk, OWN, full)
    kf1, kf2 = skip._reach_max(A1p, A1, fk), skip._reach_max(A2p, A2, fk)
    f2 = np.zeros(nb2); np.maximum.at(f2, P2, full)
    if Wp is not None:
        mv = np.abs(W.astype(np.float64) - Wp)
        qmv = {v: float(np.quantile(mv[::97], q)) for v, q in Q.items()}
        m1 = np.zeros(nb1); np.maximum.at(m1, P1, mv)
        m2 = np.zeros(nb2); np.maximum.at(m2, P2, mv)
        dg = abs(g - gp)
        mk = np.zeros(K.block_count); np.maximum.at(mk, OWN, mv)
        km1, km2 = skip._reach_max(A1p, A1, mk), skip._reach_max(A2p, A2, mk)
    out = {"round": k, "change": float(change)}
    tot["all"] += codes.sum()
    for v in variants:
        gen = np.ones(NS, dtype=bool)
        for i in range(NS):
            d = info[i]
            if Wp is not None and np.isfinite(ell[v][i]):
                if v in Q:
                    Dm, Df = qmv[v], qfull[v]
                elif v == "global":
                    Dm, Df = mv.max(), full.max()
                elif v == "P1":
                    Dm, Df = (m1[d["b1"]].max(), f1[d["b1"]].max()) if len(d["b1"]) else (0.0, 0.0)
                elif v == "keys":
                    Dm = max(km1[key_own[i]], km2[key_other[i]])
                    Df = max(kf1[key_own[i]], kf2[key_other[i]])
                elif v == "P1+P2":
                    b = d["b2"]; p1 = b[b >= 0]; p2 = -1 - b[b < 0]
                    Dm = max(m1[p1].max(initial=0.0), m2[p2].max(initial=0.0))
                    Df = max(f1[p1].max(initial=0.0), f2[p2].max(initial=0.0))
                    Dsum = max((m1[p1] + f1[p1]).max(initial=0.0), (m2[p2] + f2[p2]).max(initial=0.0))
                else:
                    x = d["succ"]
                    Dm, Df = (mv[x].max(), full[x].max()) if len(x) else (0.0, 0.0)
                D = (Dsum if v == "P1+P2" else Dm + Df) + dg
                if ell[v][i] > 2 * D + 2.5e-7:
                    gen[i] = False
                    ell[v][i] -= 2 * (Dm + dg)
                    if v in Q:  # unsound: did the kept actions stop being best?
                        now = best_codes(i, F, g)
                        if now != best_at[v][i]:
                            wrong[v] += 1
                            harm[v] = max(harm[v], loss(i, F, g, best_at[v][i]))
                    continue
            L = lead(i, F, g)
            if v in Q:
                best_at[v][i] = best_codes(i, F, g)
                Df = qfull[v]
            elif v == "global":
                Df = full.max()
            elif v == "P1":
                Df = f1[d["b1"]].max() if len(d["b1"]) else 0.0
            elif v == "keys":
                Df = max(kf1[key_own[i]], kf2[key_other[i]])
            elif v == "P1+P2":
                b = d["b2"]; Df = max(f1[b[b >= 0]].max(initial=0.0), f2[-1 - b[b < 0]].max(initial=0.0))
            else:
                Df = full[d["succ"]].max() if len(d["succ"]) else 0.0
            ell[v][i] = L - 2 * Df
        out[v] = float(codes[gen].sum() / codes.sum())
        tot[v] += codes[gen].sum()
    out.update({f"wrong_{v}": wrong[v] for v in Q})
    out.update({f"harm_{v}": harm[v] for v in Q})
    rows.append(out)
    print(json.dumps({a: (round(b, 4) if isinstance(b, float) else b) for a, b in out.items()}), flush=True)
    return r
skip.Skip.begin, skip.Skip.end = begin, end
from gamesolver.games.ur.solve import solve
solve(o, pathlib.Path(tempfile.mkdtemp()) / "t", tolerance=1e-5, threads=2, graph="regenerate")
print("share of codes generated over the walk:", {v: round(float(tot[v] / tot["all"]), 4) for v in variants})
