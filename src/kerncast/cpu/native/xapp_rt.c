/* kerncast XAPP profiler runtime: computes XAPP's 39 features of one region of interest
 * while the program instrumented by xapp_pass.cpp runs.
 *
 * The region is every activation of one function, or what runs between the markers
 * kerncast_region_begin() and kerncast_region_end().
 *
 * Environment:
 *   KERNCAST_XAPP_REGION  the function whose activations are the region; empty: the markers
 *   KERNCAST_XAPP_OUT     where the JSON result is written (required)
 *   KERNCAST_XAPP_PERIOD  the sampled features are computed on one interval of 2^20
 *                         operations in every PERIOD (after the first FIRST_INTERVALS);
 *                         1 computes them on every operation
 *   KERNCAST_XAPP_MAX_OPS the program stops (exit status 0, "truncated": 1) once the region
 *                         has run about this many operations; 0 or unset: no limit
 *
 * Exact, from every operation of the region: the operation mix (each segment's
 * executions times its static mix), the references, and the set of 64-byte blocks and
 * 4 KiB pages touched (memInt, pages, coldRef: a cold reference is a block's first).
 * Sampled, on whole intervals: ILP, the strides, reuse distances and branch divergence
 * (their state starts afresh with each sampled interval). ILP is the
 * operations per cycle of an ideal machine (unit latency, perfect caches and branch
 * prediction) whose instruction window holds W operations and retires in order; a
 * value is ready one cycle after its last operand (loads also wait for the last store
 * to their 8-byte word); calls pass readiness to the callee's arguments and back.
 */
#define _POSIX_C_SOURCE 200809L
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { C_NONE = 0, C_ARITH = 1, C_FP = 2, C_MEM = 3, C_CTRL = 4 };
enum { F_MUL = 1, F_DIV = 2, F_REM = 4, F_SPF = 8, F_LOAD = 16, F_STORE = 32, F_CALL = 64,
       F_RET = 128, F_BRANCH = 256 };

#define NW 4          /* ILP windows */
#define NB 7          /* branch-divergence windows: 16 .. 1024 */
#define INTERVAL (1u << 18)
#define FIRST_INTERVALS 1
#define MEMDEP_BITS 16
#define MAX_DEPTH 65536

static const uint32_t WINDOWS[NW] = {32, 256, 2048, 16384};

/* shared with the instrumented code */
uint64_t __xa_addr[512];
int32_t __xa_mode;     /* 0: outside the region, 1: between samples, 2: a sampled interval */
int64_t __xa_budget;   /* operations left in the interval (counted by the code in mode 1) */
uint64_t *__xa_exec;   /* executions per segment */
uint64_t *__xa_lastblock; /* per memory slot of the module: the 64-byte block it last touched */

typedef struct { int32_t fid, bb, first, count, has_phi; } seg_t;
typedef struct { int32_t self, cls, flags, slot, nops, op[4]; } op_t;
typedef struct { int32_t phi, pred, value; } phi_t;

static struct {
  int nfns, nsegs, nops, nphis, nbbs, nvalues, timing;
  const char *names;
  const int32_t *fninfo;
  const seg_t *segs;
  const op_t *ops;
  const phi_t *phis;
  const int32_t *bbphi;
  char *is_region;
} T;

typedef struct { int32_t fid, last_bb, pending_call; uint64_t ret_ready[NW]; } act_t;
static act_t *stack;
/* per segment: executions, and its static memory accesses and operations */
static uint64_t *seg_exec;
static int32_t *seg_nmem;
static int depth, region_depth;

/* counts */
static uint64_t n_ops, n_cls[5], n_mul, n_div, n_rem, n_spf;
static uint64_t n_all_refs, n_refs, n_reuse4, n_blocks, n_pages;
static uint64_t loc_hist[4], glob_hist[4], last_global;
static int have_global;
static uint64_t *last_addr; /* per value id: last address + 1 (0: none) */
static uint64_t lru[4];
static int lru_n;
/* branches */
static uint64_t *br_n, *br_change;
static int64_t *br_last;
static uint64_t l_tot[NB], l_div[NB], g_tot[NB], g_div[NB], g_n, g_change;
static int64_t g_last;
/* pages: open addressing, page number -> mask of 64-byte blocks touched */
static uint64_t *pg_key, *pg_mask;
static uint64_t pg_cap, pg_used;
/* ILP */
static uint64_t (*ready)[NW];
static uint64_t *ring[NW], last_retire[NW], base[NW], cycles[NW], ilp_i, ilp_ops;
static struct { uint64_t tag; uint64_t r[NW]; } *memdep;
static uint64_t interval_ops, interval_k;
static int sampling, period = 32, truncated;
static uint64_t max_ops, region_ops;
/* time and output */
static double t_enter, region_seconds, last_write;
static uint64_t region_calls;
static const char *out_path, *region_name;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void *zalloc(size_t n) {
  void *p = calloc(n ? n : 1, 1);
  if (!p) { fprintf(stderr, "kerncast-xapp: out of memory\n"); exit(70); }
  return p;
}

static void write_result(void);

void __xa_register(int nfns, const char *names, const int32_t *fninfo, int nsegs, const int32_t *segs,
                   int nops, const int32_t *ops, int nphis, const int32_t *phis, int nbbs,
                   const int32_t *bbphi, int nvalues, int nslots, int timing) {
  if (T.names) { fprintf(stderr, "kerncast-xapp: one instrumented module per program\n"); exit(70); }
  T.nfns = nfns; T.names = names; T.fninfo = fninfo; T.nsegs = nsegs; T.segs = (const seg_t *)segs;
  T.nops = nops; T.ops = (const op_t *)ops; T.nphis = nphis; T.phis = (const phi_t *)phis;
  T.nbbs = nbbs; T.bbphi = bbphi; T.nvalues = nvalues; T.timing = timing;
  region_name = getenv("KERNCAST_XAPP_REGION");
  out_path = getenv("KERNCAST_XAPP_OUT");
  if (!region_name || !out_path) {
    fprintf(stderr, "kerncast-xapp: set KERNCAST_XAPP_REGION and KERNCAST_XAPP_OUT\n");
    exit(70);
  }
  const char *p = getenv("KERNCAST_XAPP_PERIOD");
  if (p && atoi(p) > 0) period = atoi(p);
  const char *m = getenv("KERNCAST_XAPP_MAX_OPS");
  if (m) max_ops = strtoull(m, NULL, 10);
  T.is_region = zalloc((size_t)nfns);
  const char *name = names;
  for (int f = 0; f < nfns; f++) {
    T.is_region[f] = region_name[0] != '\0' && strcmp(name, region_name) == 0;
    name += strlen(name) + 1;
  }
  stack = zalloc(sizeof(act_t) * MAX_DEPTH);
  if (!timing) {
    seg_exec = __xa_exec = zalloc((size_t)nsegs * sizeof *seg_exec);
    __xa_lastblock = zalloc((size_t)(nslots > 0 ? nslots : 1) * sizeof *__xa_lastblock);
    seg_nmem = zalloc((size_t)nsegs * sizeof *seg_nmem);
    for (int k = 0; k < nsegs; k++)
      for (int j = 0; j < T.segs[k].count; j++) seg_nmem[k] += T.ops[T.segs[k].first + j].slot >= 0;
    size_t nv = (size_t)nvalues;
    last_addr = zalloc(nv * sizeof *last_addr);
    br_n = zalloc(nv * sizeof *br_n);
    br_change = zalloc(nv * sizeof *br_change);
    br_last = zalloc(nv * sizeof *br_last);
    ready = zalloc(nv * sizeof *ready);
    for (int w = 0; w < NW; w++) ring[w] = zalloc(WINDOWS[w] * sizeof(uint64_t));
    memdep = zalloc(sizeof(*memdep) << MEMDEP_BITS);
    pg_cap = 1u << 16;
    pg_key = zalloc(pg_cap * sizeof *pg_key);
    pg_mask = zalloc(pg_cap * sizeof *pg_mask);
  }
  atexit(write_result);
}

/* ---- memory ---- */

static inline uint64_t hash64(uint64_t x) {
  x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33;
  return x;
}

static void pg_grow(void) {
  uint64_t cap = pg_cap * 2, *key = zalloc(cap * sizeof *key), *mask = zalloc(cap * sizeof *mask);
  for (uint64_t i = 0; i < pg_cap; i++) {
    if (!pg_key[i]) continue;
    uint64_t j = hash64(pg_key[i]) & (cap - 1);
    while (key[j]) j = (j + 1) & (cap - 1);
    key[j] = pg_key[i]; mask[j] = pg_mask[i];
  }
  free(pg_key); free(pg_mask);
  pg_key = key; pg_mask = mask; pg_cap = cap;
}

/* A direct-mapped cache of recently touched pages in front of the table. */
#define PC_SIZE 256
static uint64_t pc_page[PC_SIZE];
static uint64_t *pc_mask[PC_SIZE];

static uint64_t *page_slot(uint64_t page) {
  uint64_t key = page + 1, j = hash64(key) & (pg_cap - 1);
  while (pg_key[j] && pg_key[j] != key) j = (j + 1) & (pg_cap - 1);
  if (!pg_key[j]) {
    if (2 * (pg_used + 1) > pg_cap) {
      pg_grow();
      memset(pc_mask, 0, sizeof pc_mask);
      return page_slot(page);
    }
    pg_key[j] = key; pg_used++; n_pages++;
  }
  return &pg_mask[j];
}

static inline uint64_t *page_mask(uint64_t page) {
  unsigned c = (unsigned)(page & (PC_SIZE - 1));
  if (pc_page[c] == page && pc_mask[c]) return pc_mask[c];
  uint64_t *m = page_slot(page);
  pc_page[c] = page;
  pc_mask[c] = m;
  return m;
}

static inline int stride_bucket(uint64_t a, uint64_t b) {
  uint64_t d = a > b ? a - b : b - a;
  return d == 0 ? 0 : d <= 8 ? 1 : d <= 128 ? 2 : 3;
}

static inline void touch(uint64_t addr) {
  uint64_t *mask = page_mask(addr >> 12), bit = 1ULL << ((addr >> 6) & 63);
  if (!(*mask & bit)) { *mask |= bit; n_blocks++; }
}

static inline void memory_ref(int32_t self, uint64_t addr) {
  uint64_t block = addr >> 6;
  n_refs++;
  int p = 0;
  while (p < lru_n && lru[p] != block) p++;
  if (p < lru_n) {
    n_reuse4++;
  } else {
    if (lru_n < 4) lru_n++;
    p = lru_n - 1;
  }
  for (int k = p; k > 0; k--) lru[k] = lru[k - 1];
  lru[0] = block;
  if (last_addr[self]) loc_hist[stride_bucket(addr, last_addr[self] - 1)]++;
  last_addr[self] = addr + 1;
  if (have_global) glob_hist[stride_bucket(addr, last_global)]++;
  last_global = addr; have_global = 1;
}

/* ---- branches ---- */

static inline void groups(uint64_t *n, uint64_t *change, int64_t *last, int64_t outcome,
                          uint64_t *tot, uint64_t *div) {
  uint64_t j = *n;
  if (j > 0 && outcome != *last) *change = j;
  *last = outcome;
  *n = j + 1;
  if (((j + 1) & 15) != 0) return;
  for (int w = 0; w < NB; w++) {
    uint64_t W = 16ULL << w;
    if (((j + 1) & (W - 1)) != 0) break;
    tot[w]++;
    if (*change > j + 1 - W) div[w]++;
  }
}

/* ---- ILP ---- */

static void interval_start(void) {
  size_t nv = (size_t)T.nvalues;
  memset(last_addr, 0, nv * sizeof *last_addr);
  memset(br_n, 0, nv * sizeof *br_n);
  memset(br_change, 0, nv * sizeof *br_change);
  memset(br_last, 0, nv * sizeof *br_last);
  g_n = g_change = 0;
  g_last = 0;
  lru_n = 0;
  have_global = 0;
  for (int w = 0; w < NW; w++) {
    base[w] = last_retire[w];
    for (uint32_t k = 0; k < WINDOWS[w]; k++) ring[w][k] = base[w];
  }
}

static void interval_end(void) {
  if (!sampling) return;
  for (int w = 0; w < NW; w++) cycles[w] += last_retire[w] - base[w];
  sampling = 0;
}

static void next_interval(void) {
  region_ops += INTERVAL;
  if (max_ops && region_ops >= max_ops) {
    truncated = 1;
    write_result();
    _exit(0);
  }
  interval_end();
  interval_k++;
  interval_ops = 0;
  __xa_budget = INTERVAL;
  sampling = interval_k < FIRST_INTERVALS || interval_k % (uint64_t)period == 0;
  if (sampling) interval_start();
  if (region_depth > 0) __xa_mode = sampling ? 2 : 1;
}

static inline void ilp_op(const op_t *o, uint64_t addr) {
  uint64_t r[NW] = {0, 0, 0, 0};
  for (int k = 0; k < o->nops; k++) {
    const uint64_t *v = ready[o->op[k]];
    for (int w = 0; w < NW; w++) r[w] = v[w] > r[w] ? v[w] : r[w];
  }
  uint64_t word = addr >> 3, slot = hash64(word) & ((1u << MEMDEP_BITS) - 1);
  if (o->slot >= 0 && (o->flags & F_LOAD) && memdep[slot].tag == word + 1)
    for (int w = 0; w < NW; w++) r[w] = memdep[slot].r[w] > r[w] ? memdep[slot].r[w] : r[w];
  uint64_t *out = ready[o->self];
  if (o->cls == C_NONE) {
    for (int w = 0; w < NW; w++) out[w] = r[w];
    return;
  }
  for (int w = 0; w < NW; w++) {
    uint64_t *cell = &ring[w][ilp_i & (WINDOWS[w] - 1)];
    uint64_t start = r[w] > *cell ? r[w] : *cell, done = start + 1;
    uint64_t retire = done > last_retire[w] ? done : last_retire[w];
    *cell = retire;
    last_retire[w] = retire;
    out[w] = done;
  }
  ilp_i++;
  ilp_ops++;
  if (o->slot >= 0 && (o->flags & F_STORE)) {
    memdep[slot].tag = word + 1;
    for (int w = 0; w < NW; w++) memdep[slot].r[w] = out[w];
  }
}

/* ---- hooks ---- */

static void region_begin(void) {
  if (region_depth++ > 0) return;
  region_calls++;
  t_enter = now();
  if (T.timing) return;
  if (region_calls == 1) {
    sampling = 1;
    __xa_budget = INTERVAL;
    interval_start();
  }
  __xa_mode = sampling ? 2 : 1;
}

static void region_end(void) {
  if (region_depth == 0 || --region_depth > 0) return;
  __xa_mode = 0;
  region_seconds += now() - t_enter;
  if (now() - last_write > 1.0) write_result();
}

void kerncast_region_begin(void) { region_begin(); }
void kerncast_region_end(void) { region_end(); }

void __xa_enter(int32_t fid) {
  if (depth >= MAX_DEPTH) { fprintf(stderr, "kerncast-xapp: calls nest deeper than %d\n", MAX_DEPTH); exit(70); }
  act_t *caller = depth > 0 ? &stack[depth - 1] : NULL;
  act_t *a = &stack[depth++];
  a->fid = fid; a->last_bb = -1; a->pending_call = -1;
  memset(a->ret_ready, 0, sizeof a->ret_ready);
  if (T.is_region[fid]) region_begin();
  if (T.timing || region_depth == 0) return;
  /* the arguments are ready when the call's operands are */
  if (caller && caller->pending_call >= 0) {
    int32_t first = T.fninfo[2 * fid], n = T.fninfo[2 * fid + 1];
    for (int32_t k = 0; k < n; k++) memcpy(ready[first + k], ready[caller->pending_call], sizeof ready[0]);
  }
}

void __xa_exit(int32_t fid) {
  if (depth == 0) return;
  act_t *a = &stack[--depth];
  if (!T.timing && region_depth > 0 && depth > 0) {
    act_t *caller = &stack[depth - 1];
    if (caller->pending_call >= 0) memcpy(ready[caller->pending_call], a->ret_ready, sizeof a->ret_ready);
  }
  if (T.is_region[fid]) region_end();
}

/* Between samples: the code counts segments itself and calls here when an access left
 * its last 64-byte block or the interval's budget is spent. */
void __xa_fast(int32_t sid) {
  for (int32_t k = 0; k < seg_nmem[sid]; k++) touch(__xa_addr[k]);
  if (__xa_budget <= 0) next_interval();
}

void __xa_seg(int32_t sid, int64_t direction) {
  if (region_depth == 0 || depth == 0) return;
  const seg_t *s = &T.segs[sid];
  act_t *a = &stack[depth - 1];
  if (s->has_phi && sampling) {
    int32_t first = T.bbphi[2 * s->bb], n = T.bbphi[2 * s->bb + 1];
    for (int32_t k = first; k < first + n; k++) {
      const phi_t *p = &T.phis[k];
      if (p->pred != a->last_bb) continue;
      if (p->value >= 0) memcpy(ready[p->phi], ready[p->value], sizeof ready[0]);
      else memset(ready[p->phi], 0, sizeof ready[0]);
    }
  }
  a->last_bb = s->bb;
  seg_exec[sid]++;
  const op_t *o = &T.ops[s->first], *end = o + s->count;
  for (; o < end; o++) {
    uint64_t addr = 0;
    if (o->slot >= 0) {
      addr = __xa_addr[o->slot];
      touch(addr);
      memory_ref(o->self, addr);
    }
    if (o->flags & F_BRANCH) {
      groups(&br_n[o->self], &br_change[o->self], &br_last[o->self], direction, l_tot, l_div);
      groups(&g_n, &g_change, &g_last, direction, g_tot, g_div);
    }
    ilp_op(o, addr);
    if (o->flags & F_RET) memcpy(a->ret_ready, ready[o->self], sizeof a->ret_ready);
    if (o->flags & F_CALL) a->pending_call = o->self;
  }
  interval_ops += (uint64_t)s->count;
  if (interval_ops >= INTERVAL) next_interval();
}

/* ---- result ---- */

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

/* The operation mix and the reference count: every segment's executions times its ops. */
static void mix(void) {
  n_ops = n_mul = n_div = n_rem = n_spf = n_all_refs = 0;
  memset(n_cls, 0, sizeof n_cls);
  for (int k = 0; k < T.nsegs; k++) {
    uint64_t e = seg_exec[k];
    if (!e) continue;
    n_all_refs += e * (uint64_t)seg_nmem[k];
    for (int j = 0; j < T.segs[k].count; j++) {
      const op_t *o = &T.ops[T.segs[k].first + j];
      if (o->cls == C_NONE) continue;
      n_ops += e;
      n_cls[o->cls] += e;
      n_mul += (o->flags & F_MUL) ? e : 0;
      n_div += (o->flags & F_DIV) ? e : 0;
      n_rem += (o->flags & F_REM) ? e : 0;
      n_spf += (o->flags & F_SPF) ? e : 0;
    }
  }
}

static void write_result(void) {
  last_write = now();
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
  FILE *f = fopen(tmp, "w");
  if (!f) return;
  double elapsed = region_seconds + (region_depth > 0 ? now() - t_enter : 0.0);
  int found = 0;
  for (int k = 0; k < T.nfns; k++) found |= T.is_region[k];
  fprintf(f, "{\"region\": \"%s\", \"function_found\": %d, \"calls\": %llu, \"region_seconds\": %.9g, "
          "\"truncated\": %d", region_name, found, (unsigned long long)region_calls, elapsed, truncated);
  if (!T.timing) {
    mix();
    uint64_t c[NW];
    for (int w = 0; w < NW; w++) c[w] = cycles[w] + (sampling ? last_retire[w] - base[w] : 0);
    uint64_t loc = loc_hist[0] + loc_hist[1] + loc_hist[2] + loc_hist[3];
    uint64_t glob = glob_hist[0] + glob_hist[1] + glob_hist[2] + glob_hist[3];
    fprintf(f, ", \"ops\": %llu, \"refs\": %llu, \"ilp_ops\": %llu, \"ilp_period\": %d, \"features\": {",
            (unsigned long long)n_ops, (unsigned long long)n_all_refs, (unsigned long long)ilp_ops, period);
    for (int w = 0; w < NW; w++) fprintf(f, "\"ilp%u\": %.9g, ", WINDOWS[w], ratio(ilp_ops, c[w]));
    fprintf(f, "\"mem\": %.9g, \"ctrl\": %.9g, \"arith\": %.9g, \"fp\": %.9g, ", ratio(n_cls[C_MEM], n_ops),
            ratio(n_cls[C_CTRL], n_ops), ratio(n_cls[C_ARITH], n_ops), ratio(n_cls[C_FP], n_ops));
    const char *b[4] = {"0", "8", "128", "Other"};
    for (int k = 0; k < 4; k++) fprintf(f, "\"locStride%s\": %.9g, ", b[k], ratio(loc_hist[k], loc));
    for (int k = 0; k < 4; k++) fprintf(f, "\"gStride%s\": %.9g, ", b[k], ratio(glob_hist[k], glob));
    double i32 = ratio(ilp_ops, c[0]), i16k = ratio(ilp_ops, c[NW - 1]);
    fprintf(f, "\"memInt\": %.9g, \"pages\": %.9g, \"coldRef\": %.9g, \"reuseDist4\": %.9g, "
               "\"ilpRate\": %.9g, ", ratio(n_blocks, n_ops), ratio(n_pages, n_ops),
            ratio(n_blocks, n_all_refs), ratio(n_reuse4, n_refs), i32 > 0 ? i16k / i32 : 0.0);
    fprintf(f, "\"mul\": %.9g, \"div\": %.9g, \"rem\": %.9g, \"spf\": %.9g", ratio(n_mul, n_ops),
            ratio(n_div, n_ops), ratio(n_rem, n_ops), ratio(n_spf, n_ops));
    for (int w = 0; w < NB; w++) fprintf(f, ", \"Lbdiv%d\": %.9g", 16 << w, ratio(l_div[w], l_tot[w]));
    for (int w = 0; w < NB; w++) fprintf(f, ", \"Gbdiv%d\": %.9g", 16 << w, ratio(g_div[w], g_tot[w]));
    fprintf(f, "}");
  }
  fprintf(f, "}\n");
  fclose(f);
  rename(tmp, out_path);
}
