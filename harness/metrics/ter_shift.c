/* sacrebleu's TER (lib_ter.translation_edit_rate) on integer word ids: same costs, beam, tie order, shift rules.
 *
 * Compiled on first use by harness/metrics/native.py and called through ctypes. Every rule mirrors
 * sacrebleu 2.x lib_ter.py:
 *   - beam edit distance: beam 25 around the pseudo-diagonal floor(i * m / n) (wider for very unequal lengths),
 *     the last row full width, cells start at (INF, undefined) and take an operation only when strictly cheaper,
 *     in the order no-op/substitution, deletion, insertion;
 *   - shift search: candidate pairs in (start_h, start_r, length) order, |start_r - start_h| <= 50, length <= 10,
 *     the hypothesis and reference error and alignment filters, targets from offsets -1..length-1 with repeated
 *     targets skipped, ranking by (gain, length, -start_h, -target), at most 1000 candidates per sentence in all;
 *   - the outer loop stops when 1000 candidates were checked (before applying that round's shift) or no gain.
 * sacrebleu's row cache only memoizes rows (all hypotheses of one sentence have the same length, so a row
 * depends on the prefix alone); here a candidate reuses the rows of its shared prefix with the current words.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define INF 10000000000000000LL
#define MAX_SHIFT_SIZE 10
#define MAX_SHIFT_DIST 50
#define BEAM_WIDTH 25
#define MAX_CANDIDATES 1000

enum { OP_UNDEF = 0, OP_NOP = 1, OP_SUB = 2, OP_DEL = 3, OP_INS = 4 };

typedef struct {
    int n, m, beam;
    double ratio;
    const int32_t *ref;
    int64_t *cost; /* (n + 1) x (m + 1) */
    uint8_t *ops;
} Ed;

static int ed_beam(int n, int m, double *ratio) {
    double r = n > 0 ? (double)m / (double)n : 1.0;
    *ratio = r;
    if (BEAM_WIDTH < r / 2) {
        double b = r / 2 + BEAM_WIDTH;
        int bi = (int)b;
        if ((double)bi < b) bi += 1; /* math.ceil */
        return bi;
    }
    return BEAM_WIDTH;
}

/* Fill rows start+1..end of the matrix for hypothesis `hyp` (row start already holds its prefix's row). */
static void ed_fill(Ed *e, const int32_t *hyp, int start, int end) {
    int n = e->n, m = e->m, w = m + 1;
    for (int i = start + 1; i <= end; i++) {
        int diag = (int)(i * e->ratio); /* floor: non-negative */
        int lo = diag - e->beam > 0 ? diag - e->beam : 0;
        int hi = diag + e->beam < m + 1 ? diag + e->beam : m + 1;
        if (i == n) hi = m + 1;
        int64_t *pc = e->cost + (int64_t)(i - 1) * w, *cc = e->cost + (int64_t)i * w;
        uint8_t *co = e->ops + (int64_t)i * w;
        /* cells outside the band stay INF/undefined; only those the next row can read need writing: the one left
           of the band and those right of it up to the next row's band end (the diagonal moves by < ratio + 1) */
        if (lo > 0) { cc[lo - 1] = INF; co[lo - 1] = OP_UNDEF; }
        int stale_end = hi + (int)e->ratio + 2 < w ? hi + (int)e->ratio + 2 : w;
        for (int j = hi; j < stale_end; j++) { cc[j] = INF; co[j] = OP_UNDEF; }
        int32_t word = hyp[i - 1];
        for (int j = lo; j < hi; j++) {
            if (j == 0) {
                cc[0] = pc[0] + 1;
                co[0] = OP_DEL;
                continue;
            }
            int64_t best = INF, c;
            uint8_t op = OP_UNDEF;
            int same = word == e->ref[j - 1];
            c = pc[j - 1] + (same ? 0 : 1);
            if (best > c) { best = c; op = same ? OP_NOP : OP_SUB; }
            c = pc[j] + 1;
            if (best > c) { best = c; op = OP_DEL; }
            c = cc[j - 1] + 1;
            if (best > c) { best = c; op = OP_INS; }
            cc[j] = best;
            co[j] = op;
        }
    }
}

/* ed_fill's costs alone (no operations: a candidate's matrix is never traced), without branches: a cell is
 * min(INF, diagonal, deletion, insertion), which is what taking an operation only when strictly cheaper gives. */
static void ed_fill_cost(Ed *e, const int32_t *hyp, int start, int end) {
    int n = e->n, m = e->m, w = m + 1;
    for (int i = start + 1; i <= end; i++) {
        int diag = (int)(i * e->ratio);
        int lo = diag - e->beam > 0 ? diag - e->beam : 0;
        int hi = diag + e->beam < m + 1 ? diag + e->beam : m + 1;
        if (i == n) hi = m + 1;
        int64_t *pc = e->cost + (int64_t)(i - 1) * w, *cc = e->cost + (int64_t)i * w;
        if (lo > 0) cc[lo - 1] = INF;
        int stale_end = hi + (int)e->ratio + 2 < w ? hi + (int)e->ratio + 2 : w;
        for (int j = hi; j < stale_end; j++) cc[j] = INF;
        int32_t word = hyp[i - 1];
        int j = lo;
        if (j == 0 && j < hi) { cc[0] = pc[0] + 1; j = 1; }
        int64_t left = j > 0 ? cc[j - 1] : INF;
        for (; j < hi; j++) {
            int64_t c = pc[j - 1] + (word != e->ref[j - 1]);
            int64_t d = pc[j] + 1;
            int64_t best = c < INF ? c : INF;
            best = d < best ? d : best;
            int64_t ins = left + 1;
            best = ins < best ? ins : best;
            cc[j] = left = best;
        }
    }
}

/* Trace of the matrix (sacrebleu's op order, before flipping) into `trace`; its length, or -1 on an undefined cell. */
static int ed_trace(const Ed *e, uint8_t *trace) {
    int i = e->n, j = e->m, w = e->m + 1, len = 0;
    while (i > 0 || j > 0) {
        uint8_t op = e->ops[(int64_t)i * w + j];
        trace[len++] = op;
        if (op == OP_SUB || op == OP_NOP) { i--; j--; }
        else if (op == OP_INS) j--;
        else if (op == OP_DEL) i--;
        else return -1;
    }
    for (int a = 0, b = len - 1; a < b; a++, b--) { uint8_t t = trace[a]; trace[a] = trace[b]; trace[b] = t; }
    return len;
}

/* Cells of row i that the beam allows: [lo, hi). */
static void band(const Ed *e, int i, int *lo, int *hi) {
    if (i == 0) { *lo = 0; *hi = e->m + 1; return; }
    int diag = (int)(i * e->ratio);
    *lo = diag - e->beam > 0 ? diag - e->beam : 0;
    *hi = diag + e->beam < e->m + 1 ? diag + e->beam : e->m + 1;
    if (i == e->n) *hi = e->m + 1;
}

/* back[i][j]: the cheapest way from cell (i, j) to (n, m) through the cells the beam allows, for hypothesis `hyp`
 * (INF where there is none). The forward distance of a hypothesis that equals `hyp` from position q on is then
 * min_j forward[q][j] + back[q][j]: every path crosses row q, and the forward matrix is the shortest path through
 * the same cells (an operation is taken only when strictly cheaper, so its values are exact distances or INF). */
static void ed_back(const Ed *e, const int32_t *hyp, int64_t *back) {
    int n = e->n, m = e->m, w = m + 1;
    for (int64_t c = 0; c < (int64_t)(n + 1) * w; c++) back[c] = INF;
    int lo, hi;
    band(e, n, &lo, &hi);
    int64_t *row = back + (int64_t)n * w;
    row[m] = 0;
    for (int j = m - 1; j >= lo; j--) row[j] = row[j + 1] + 1;
    for (int i = n - 1; i >= 0; i--) {
        band(e, i, &lo, &hi);
        int64_t *cur = back + (int64_t)i * w, *nxt = back + (int64_t)(i + 1) * w;
        int32_t word = hyp[i];
        /* min(INF, ...) of the moves: a move from an INF cell costs at least INF, so it never wins (no branches) */
        for (int j = hi - 1; j >= lo; j--) {
            int64_t best = INF;
            if (j + 1 <= m) {
                int64_t c = nxt[j + 1] + (word != e->ref[j]);
                best = c < best ? c : best;
            }
            int64_t d = nxt[j] + 1;
            best = d < best ? d : best;
            if (j + 1 < hi) {
                int64_t h = cur[j + 1] + 1;
                best = h < best ? h : best;
            }
            cur[j] = best;
        }
    }
}

static void perform_shift(const int32_t *w, int n, int start, int length, int target, int32_t *out) {
    int k = 0;
#define COPY(a, b) for (int q = (a); q < (b); q++) out[k++] = w[q]
    if (target < start) {
        COPY(0, target); COPY(start, start + length); COPY(target, start); COPY(start + length, n);
    } else if (target > start + length) {
        COPY(0, start); COPY(start + length, target); COPY(start, start + length); COPY(target, n);
    } else {
        int mid = length + target < n ? length + target : n;
        COPY(0, start); COPY(start + length, mid); COPY(start, start + length); COPY(mid, n);
    }
#undef COPY
}

/* [p, q): the positions perform_shift(w, n, start, length, target) can change (outside it out[i] == w[i]). */
static void shift_span(int n, int start, int length, int target, int *p, int *q) {
    if (target < start) { *p = target; *q = start + length; }
    else if (target > start + length) { *p = start; *q = target; }
    else { *p = start; *q = length + target < n ? length + target : n; }
}

/* rpos: the reference positions 0..m-1 ordered by (word id, position), so the positions holding one word are a run
 * in increasing order (insertion sort: sentences are short). */
static void sort_positions(const int32_t *ref, int m, int *rpos) {
    for (int j = 0; j < m; j++) {
        int k = j;
        while (k > 0 && ref[rpos[k - 1]] > ref[j]) { rpos[k] = rpos[k - 1]; k--; }
        rpos[k] = j;
    }
}

/* The first index of rpos whose reference word is >= `word` (binary search). */
static int first_position(const int32_t *ref, const int *rpos, int m, int32_t word) {
    int lo = 0, hi = m;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (ref[rpos[mid]] < word) lo = mid + 1; else hi = mid;
    }
    return lo;
}

/* Edits (shifts + edit distance) turning hypothesis `hyp` (n ids) into reference `ref` (m >= 1 ids); -1 on error. */
static int64_t ter_one(const int32_t *hyp_in, int n, const int32_t *ref, int m) {
    Ed e;
    e.n = n; e.m = m; e.ref = ref;
    e.beam = ed_beam(n, m, &e.ratio);
    int64_t cells = (int64_t)(n + 1) * (m + 1);
    e.cost = malloc(sizeof(int64_t) * cells);
    e.ops = malloc(cells);
    /* scratch matrix for candidates: rows of the shared prefix are copied from the current words' matrix */
    Ed s = e;
    s.cost = malloc(sizeof(int64_t) * cells);
    s.ops = malloc(cells);
    int64_t *back = malloc(sizeof(int64_t) * cells);
    int32_t *words = malloc(sizeof(int32_t) * (n + 1)), *cand = malloc(sizeof(int32_t) * (n + 1));
    int32_t *best_words = malloc(sizeof(int32_t) * (n + 1));
    uint8_t *trace = malloc(n + m + 2);
    int *align = malloc(sizeof(int) * (m + 1)), *hyp_err = malloc(sizeof(int) * (n + 1));
    int *ref_err = malloc(sizeof(int) * (m + 1)), *rpos = malloc(sizeof(int) * (m + 1));
    int64_t result = -1;
    if (!e.cost || !e.ops || !s.cost || !s.ops || !back || !words || !cand || !best_words || !trace || !align || !hyp_err ||
        !ref_err || !rpos)
        goto done;
    memcpy(words, hyp_in, sizeof(int32_t) * n);
    sort_positions(ref, m, rpos);
    for (int j = 0; j <= m; j++) { e.cost[j] = j; e.ops[j] = OP_INS; s.cost[j] = j; s.ops[j] = OP_INS; }
    int shifts = 0, checked = 0;
    for (;;) {
        ed_fill(&e, words, 0, n);
        ed_back(&e, words, back);
        int64_t pre = e.cost[(int64_t)n * (m + 1) + m];
        int tlen = ed_trace(&e, trace);
        if (tlen < 0) goto done;
        /* flipped trace -> alignment: sacrebleu's INS (ref word) becomes DEL and vice versa */
        int ph = -1, pr = -1, nh = 0, nr = 0;
        for (int t = 0; t < tlen; t++) {
            uint8_t op = trace[t];
            if (op == OP_NOP || op == OP_SUB) {
                ph++; pr++; align[pr] = ph;
                hyp_err[nh++] = op == OP_SUB; ref_err[nr++] = op == OP_SUB;
            } else if (op == OP_DEL) { /* flipped: insertion -> hypothesis word */
                ph++; hyp_err[nh++] = 1;
            } else { /* OP_INS flipped: deletion -> reference word */
                pr++; align[pr] = ph; ref_err[nr++] = 1;
            }
        }
        int have_best = 0;
        int64_t best_gain = 0;
        int best_len = 0, best_start = 0, best_idx = 0;
        int stop = 0;
        for (int sh = 0; sh < n && !stop; sh++) {
            /* the reference positions sr that hold words[sh], in increasing order: the only sr where a candidate
               starts (sacrebleu loops over every sr; the others match no word) */
            for (int k = first_position(ref, rpos, m, words[sh]); k < m && ref[rpos[k]] == words[sh] && !stop; k++) {
                int sr = rpos[k];
                if (abs(sr - sh) > MAX_SHIFT_DIST) continue;
                int length = 0;
                while (words[sh + length] == ref[sr + length] && length < MAX_SHIFT_SIZE) {
                    length++;
                    /* candidate pair (sh, sr, length) */
                    int herr = 0, rerr = 0;
                    for (int q = sh; q < sh + length && q < nh; q++) herr += hyp_err[q];
                    for (int q = sr; q < sr + length && q < nr; q++) rerr += ref_err[q];
                    int skip = herr == 0 || rerr == 0 || (sh <= align[sr] && align[sr] < sh + length);
                    if (!skip) {
                        int prev = -1;
                        for (int off = -1; off < length; off++) {
                            int idx;
                            if (sr + off == -1) idx = 0;
                            else if (sr + off < pr + 1) idx = align[sr + off] + 1;
                            else break;
                            if (idx == prev) continue;
                            prev = idx;
                            perform_shift(words, n, sh, length, idx, cand);
                            int p, q, w = m + 1; /* cand equals words outside [p, q): start from the moved span */
                            shift_span(n, sh, length, idx, &p, &q);
                            while (p < n && cand[p] == words[p]) p++;
                            while (q > p && cand[q - 1] == words[q - 1]) q--;
                            int64_t after = pre;
                            if (p < n) { /* rows p+1..q for the candidate, then the unchanged suffix's back rows */
                                memcpy(s.cost + (int64_t)p * w, e.cost + (int64_t)p * w, sizeof(int64_t) * w);
                                ed_fill_cost(&s, cand, p, q);
                                const int64_t *fq = s.cost + (int64_t)q * w, *bq = back + (int64_t)q * w;
                                /* row q's band: the cells written in both matrices (back is INF elsewhere, the
                                   candidate's row unwritten); a sum with an INF side is >= INF: it never wins */
                                int blo, bhi;
                                band(&s, q, &blo, &bhi);
                                after = INF;
                                for (int j = blo; j < bhi; j++) {
                                    int64_t through = fq[j] + bq[j];
                                    after = through < after ? through : after;
                                }
                            }
                            int64_t gain = pre - after;
                            checked++;
                            int better = !have_best;
                            if (!better) {
                                if (gain != best_gain) better = gain > best_gain;
                                else if (length != best_len) better = length > best_len;
                                else if (sh != best_start) better = sh < best_start;
                                else better = idx < best_idx;
                            }
                            if (better) {
                                have_best = 1; best_gain = gain; best_len = length; best_start = sh; best_idx = idx;
                                memcpy(best_words, cand, sizeof(int32_t) * n);
                            }
                        }
                        /* sacrebleu checks the limit after each pair that passed the filters: the search ends */
                        if (checked >= MAX_CANDIDATES) { stop = 1; break; }
                    }
                    if (n == sh + length || m == sr + length) break;
                }
            }
        }
        int64_t delta = have_best ? best_gain : 0;
        if (checked >= MAX_CANDIDATES || delta <= 0) break;
        shifts++;
        memcpy(words, best_words, sizeof(int32_t) * n);
    }
    ed_fill(&e, words, 0, n);
    result = shifts + e.cost[(int64_t)n * (m + 1) + m];
done:
    free(e.cost); free(e.ops); free(s.cost); free(s.ops); free(back); free(words); free(cand); free(best_words);
    free(trace); free(align); free(hyp_err); free(ref_err); free(rpos);
    return result;
}

/* Batch: sentence k has hypothesis ids hyp[hoff[k]:hoff[k+1]] and reference ids ref[roff[k]:roff[k+1]].
 * out[k] = edits (an empty reference gives the hypothesis length, as sacrebleu); returns 0, or -1 - k when sentence
 * k failed (out of memory or an undefined trace cell, which sacrebleu reports with an exception). */
int64_t ter_batch(const int32_t *hyp, const int64_t *hoff, const int32_t *ref, const int64_t *roff, int64_t count,
                  int64_t *out) {
    for (int64_t k = 0; k < count; k++) {
        int n = (int)(hoff[k + 1] - hoff[k]), m = (int)(roff[k + 1] - roff[k]);
        if (m == 0) { out[k] = n; continue; }
        int64_t r = ter_one(hyp + hoff[k], n, ref + roff[k], m);
        if (r < 0) return -1 - k;
        out[k] = r;
    }
    return 0;
}
