# The layer check of check_cycles.sh (make check-deps), in awk so it needs
# nothing but the base system. Inputs, in this order:
#   RANKS  "rank layer member" lines: ARCHITECTURE.md's layer table, a member
#          being a folder ("heap/") or one file ("mutator/cardtable.c")
#   WHERE  "file.c folder/file.c" for every source the objects came from
#   ALLOW  "caller.c callee.c" lines: lib/test/layers_allow.txt, the known
#          edges (upward, or closing a cycle) still to be removed (issue 30)
#   PAIRS  "a.c b.c": the pairs ARCHITECTURE.md documents as calling each other
#   EDGES  "caller.c callee.c symbol": one line per symbol a file uses that
#          another file of the same library defines
# Fails (exit 1) on a file without a rank, on a call from a lower rank to a
# higher one, on a strongly connected component of more than two files or of
# two not documented, and on an allowlist line that matches no call; every
# failure names the files and the symbols. Allowlisted edges are left out of
# both checks; the cycle they still close is reported.
FILENAME == ARGV[1] { rk[$3] = $1; ly[$3] = $2; next }
FILENAME == ARGV[2] { path[$1] = $2; next }
FILENAME == ARGV[3] { allow[$1 " " $2] = 1; nallow++; next }
FILENAME == ARGV[4] { pair[$1 " " $2] = 1; pair[$2 " " $1] = 1; next }
{
	e = $1 " " $2
	if (!(e in syms)) { syms[e] = $3; order[++nedge] = e } else syms[e] = syms[e] " " $3
}

function fail(msg) { print "check-layers: FAIL: " msg; bad = 1 }
function rank_of(f,   p, d) {
	p = path[f]
	if (p in rk) { layer[f] = ly[p]; return rk[p] }
	d = p; sub(/[^\/]*$/, "", d)
	if (d in rk) { layer[f] = ly[d]; return rk[d] }
	return ""
}
function add(g, u, v) { adj[g, u, ++nadj[g, u]] = v; node[g, u] = 1; node[g, v] = 1 }
# Tarjan's strongly connected components of graph g: comp[g, f], csize[g, c]
function visit(g, v,   i, w) {
	idx[v] = low[v] = ++ix; stk[++sp] = v; on[v] = 1
	for (i = 1; i <= nadj[g, v]; i++) {
		w = adj[g, v, i]
		if (!(w in idx)) { visit(g, w); if (low[w] < low[v]) low[v] = low[w] }
		else if ((w in on) && idx[w] < low[v]) low[v] = idx[w]
	}
	if (low[v] == idx[v]) {
		nc[g]++
		do { w = stk[sp--]; delete on[w]; comp[g, w] = nc[g]; csize[g, nc[g]]++ } while (w != v)
	}
}
function lib_of(f) { return path[f] ~ /^native\// ? "libkgc-native" : path[f] ~ /^jni\// ? "libkgc-jni" : "libkgc" }
# the largest component of each library: "libkgc 27, libkgc-native 6, ..."
function scc(g,   k, f, big, s) {
	split("", idx); split("", low); split("", on); ix = sp = 0
	for (k in node) {
		split(k, f, SUBSEP)
		if (f[1] == g && !(f[2] in idx)) visit(g, f[2])
	}
	for (k in comp) {
		split(k, f, SUBSEP)
		if (f[1] == g && csize[g, comp[k]] > big[lib_of(f[2])] + 0) big[lib_of(f[2])] = csize[g, comp[k]]
	}
	s = ""
	for (k in big) s = s (s == "" ? "" : ", ") k " " big[k]
	return s
}
function members(g, c,   k, f, s) {
	s = ""
	for (k in comp) { split(k, f, SUBSEP); if (f[1] == g && comp[k] == c) s = s " " f[2] }
	return s
}

END {
	for (f in path) if (rank_of(f) == "") fail(path[f] " has no rank in ARCHITECTURE.md's layer table (## Layers)")
	for (i = 1; i <= nedge; i++) {
		e = order[i]; split(e, uv, " ")
		add("all", uv[1], uv[2])
		if (e in allow) { used[e] = 1; continue }
		ru = rank_of(uv[1]); rd = rank_of(uv[2])
		if (ru != "" && rd != "" && ru + 0 < rd + 0)
			fail(uv[1] " -> " uv[2] " (" syms[e] "): a call up from " layer[uv[1]] " (rank " ru ") to " layer[uv[2]] " (rank " rd ")")
		add("dag", uv[1], uv[2])
	}
	for (e in allow) if (!(e in used)) {
		split(e, uv, " ")
		fail("lib/test/layers_allow.txt lists " uv[1] " -> " uv[2] ", but it no longer calls it: drop the line")
	}
	before = scc("all"); after = scc("dag")
	for (c = 1; c <= nc["dag"]; c++) {
		if (csize["dag", c] < 2) continue
		m = members("dag", c)
		if (csize["dag", c] == 2) {
			split(m, uv, " ")
			if ((uv[1] " " uv[2]) in pair) continue
		}
		s = ""
		for (i = 1; i <= nedge; i++) {
			e = order[i]; split(e, uv, " ")
			if (!(e in allow) && comp["dag", uv[1]] == c && comp["dag", uv[2]] == c)
				s = s "\n    " uv[1] " -> " uv[2] " (" syms[e] ")"
		}
		fail("a cycle of " csize["dag", c] " files:" m s)
	}
	if (bad) exit 1
	printf "check-layers: ok (no call up; largest cycle in files: %s; %d known calls left in lib/test/layers_allow.txt, issue 30, with which the largest cycles are: %s)\n", after, nallow, before
}
