/* chrF character n-gram matches per sentence (sacrebleu's default chrF statistics, orders 1..max_order).
 *
 * For each sentence, hypothesis and reference characters (whitespace already removed) get dense n-gram ids order by
 * order: the id of the n-gram at position i is the id of the pair (id of the (n-1)-gram at i, character i+n-1),
 * looked up in a hash table shared by both sides, so equal n-grams get equal ids. The matches of order n are
 * sum over ids of min(hypothesis count, reference count), as sacrebleu counts them. Compiled with ter_shift.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t k) {
    k ^= k >> 33; k *= 0xff51afd7ed558ccdULL; k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ULL; k ^= k >> 33;
    return k;
}

/* out[k * max_order + (n - 1)] = matches of order n in sentence k; returns 0, or -1 when out of memory. */
int64_t chrf_matches(const uint32_t *hyp, const int64_t *hoff, const uint32_t *ref, const int64_t *roff,
                     int64_t count, int max_order, int64_t *out) {
    int64_t cap_len = 0;
    for (int64_t k = 0; k < count; k++) {
        int64_t len = (hoff[k + 1] - hoff[k]) + (roff[k + 1] - roff[k]);
        if (len > cap_len) cap_len = len;
    }
    int64_t size = 16;
    while (size < 2 * cap_len + 2) size <<= 1;
    uint32_t *codes = malloc(sizeof(uint32_t) * (cap_len + 1));
    int64_t *ids = malloc(sizeof(int64_t) * (cap_len + 1));
    int64_t *keys = malloc(sizeof(int64_t) * size);
    int64_t *vals = malloc(sizeof(int64_t) * size);
    int64_t *cnt_h = calloc(cap_len + 1, sizeof(int64_t)), *cnt_r = calloc(cap_len + 1, sizeof(int64_t));
    if (!codes || !ids || !keys || !vals || !cnt_h || !cnt_r) {
        free(codes); free(ids); free(keys); free(vals); free(cnt_h); free(cnt_r);
        return -1;
    }
    for (int64_t k = 0; k < count; k++) {
        int64_t lh = hoff[k + 1] - hoff[k], lr = roff[k + 1] - roff[k], len = lh + lr;
        memcpy(codes, hyp + hoff[k], sizeof(uint32_t) * lh);
        memcpy(codes + lh, ref + roff[k], sizeof(uint32_t) * lr);
        for (int64_t i = 0; i < len; i++) ids[i] = -1; /* id of the previous order's n-gram at i */
        int64_t sz = 16; /* this sentence's table size: a power of two, at least twice its n-grams */
        while (sz < 2 * len + 2) sz <<= 1;
        for (int n = 1; n <= max_order; n++) {
            int64_t next_id = 0, m = 0;
            for (int64_t s = 0; s < sz; s++) keys[s] = -1;
            /* n-grams start at i with i + n <= lh (hypothesis) or lh <= i and i + n <= len (reference) */
            for (int64_t i = 0; i < len; i++) {
                int in_hyp = i < lh;
                if ((in_hyp && i + n > lh) || (!in_hyp && i + n > len)) { ids[i] = -2; continue; }
                if (ids[i] == -2) continue;
                int64_t key = (ids[i] + 1) * ((int64_t)1 << 22) + codes[i + n - 1];
                uint64_t s = mix((uint64_t)key) & (uint64_t)(sz - 1);
                while (keys[s] != -1 && keys[s] != key) s = (s + 1) & (uint64_t)(sz - 1);
                if (keys[s] == -1) { keys[s] = key; vals[s] = next_id++; }
                ids[i] = vals[s];
                if (in_hyp) cnt_h[ids[i]]++; else cnt_r[ids[i]]++;
            }
            for (int64_t id = 0; id < next_id; id++) {
                m += cnt_h[id] < cnt_r[id] ? cnt_h[id] : cnt_r[id];
                cnt_h[id] = cnt_r[id] = 0;
            }
            out[k * max_order + (n - 1)] = m;
        }
    }
    free(codes); free(ids); free(keys); free(vals); free(cnt_h); free(cnt_r);
    return 0;
}
