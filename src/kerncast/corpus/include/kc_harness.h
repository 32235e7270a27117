/* kerncast corpus: harness for the single-threaded C versions of the kernels.
 *
 * A C version is run as   ./app KERNEL DIR   where DIR was written by kerncast:
 *   DIR/args.txt            one line per argument: name kind dtype count|value intent
 *   DIR/NAME.bin            the contents of every in and inout buffer
 *   DIR/NAME.expected.bin   the reference contents of every checked output
 *   DIR/check.txt           rtol atol
 * The program maps its arguments with kc_buffer/kc_int/kc_float, brackets its region
 * of interest (one call of a noinline function named roi_*) with KC_ROI_BEGIN and
 * KC_ROI_END, checks outputs with kc_check and ends with kc_finish, which prints
 *   kerncast-c: kernel=K roi_seconds=T status=ok|mismatch
 * and returns the exit status (0 when every checked output matches).
 */
#ifndef KC_HARNESS_H
#define KC_HARNESS_H

#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KC_MAX_ARGS 32

typedef struct {
  char name[64], kind[16], dtype[16], intent[8];
  double value;   /* scalars */
  long count;     /* buffers: elements */
  void *data;
} kc_arg;

typedef struct {
  const char *dir, *kernel;
  kc_arg args[KC_MAX_ARGS];
  int nargs, failures;
  double rtol, atol;
  struct timespec t0;
  double roi_seconds;
} kc_run;

static int kc_dtype_size(const char *d) {
  if (!strcmp(d, "int8") || !strcmp(d, "uint8")) return 1;
  if (!strcmp(d, "int16") || !strcmp(d, "uint16") || !strcmp(d, "float16")) return 2;
  if (!strcmp(d, "int32") || !strcmp(d, "uint32") || !strcmp(d, "float32")) return 4;
  return 8;
}

static void kc_die(const char *what, const char *name) {
  fprintf(stderr, "kerncast-c: %s %s\n", what, name);
  exit(2);
}

static void *kc_read_file(const char *dir, const char *name, const char *suffix, long bytes) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s%s", dir, name, suffix);
  FILE *f = fopen(path, "rb");
  if (!f) kc_die("cannot open", path);
  void *p = malloc(bytes > 0 ? bytes : 1);
  if (fread(p, 1, bytes, f) != (size_t)bytes) kc_die("short file", path);
  fclose(f);
  return p;
}

static void kc_init(kc_run *r, int argc, char **argv) {
  if (argc != 3) kc_die("usage: PROGRAM KERNEL DIR;", "got wrong argument count");
  memset(r, 0, sizeof *r);
  r->kernel = argv[1];
  r->dir = argv[2];
  char path[1024];
  snprintf(path, sizeof path, "%s/args.txt", r->dir);
  FILE *f = fopen(path, "r");
  if (!f) kc_die("cannot open", path);
  kc_arg a;
  char number[64];
  while (r->nargs < KC_MAX_ARGS &&
         fscanf(f, "%63s %15s %15s %63s %7s", a.name, a.kind, a.dtype, number, a.intent) == 5) {
    a.data = NULL;
    a.count = 0;
    a.value = 0;
    if (!strcmp(a.kind, "scalar")) {
      a.value = strtod(number, NULL);
    } else {
      a.count = strtol(number, NULL, 10);
      long bytes = a.count * kc_dtype_size(a.dtype);
      if (!strcmp(a.intent, "out")) {
        a.data = malloc(bytes > 0 ? bytes : 1);
        memset(a.data, 0xA5, bytes);
      } else {
        a.data = kc_read_file(r->dir, a.name, ".bin", bytes);
      }
    }
    r->args[r->nargs++] = a;
  }
  fclose(f);
  snprintf(path, sizeof path, "%s/check.txt", r->dir);
  f = fopen(path, "r");
  if (!f || fscanf(f, "%lf %lf", &r->rtol, &r->atol) != 2) kc_die("cannot read", path);
  fclose(f);
}

static kc_arg *kc_find(kc_run *r, const char *name) {
  for (int i = 0; i < r->nargs; i++)
    if (!strcmp(r->args[i].name, name)) return &r->args[i];
  kc_die("no argument named", name);
  return NULL;
}

static void *kc_buffer(kc_run *r, const char *name) { return kc_find(r, name)->data; }
static long kc_count(kc_run *r, const char *name) { return kc_find(r, name)->count; }
static long long kc_int(kc_run *r, const char *name) { return (long long)kc_find(r, name)->value; }
static double kc_float(kc_run *r, const char *name) { return kc_find(r, name)->value; }
static int kc_is(kc_run *r, const char *kernel) { return !strcmp(r->kernel, kernel); }

/* Built for kerncast's CPU profiler (kerncast speedup), the markers also bound the
 * profiled region. */
#ifdef KERNCAST_PROFILE
void kerncast_region_begin(void);
void kerncast_region_end(void);
#else
#define kerncast_region_begin() ((void)0)
#define kerncast_region_end() ((void)0)
#endif

#define KC_ROI_BEGIN(r) (kerncast_region_begin(), clock_gettime(CLOCK_MONOTONIC, &(r)->t0))
#define KC_ROI_END(r)                                                              \
  do {                                                                             \
    struct timespec kc_t1;                                                         \
    clock_gettime(CLOCK_MONOTONIC, &kc_t1);                                        \
    kerncast_region_end();                                                         \
    (r)->roi_seconds = (double)(kc_t1.tv_sec - (r)->t0.tv_sec) +                   \
                       1e-9 * (double)(kc_t1.tv_nsec - (r)->t0.tv_nsec);           \
  } while (0)

static double kc_get(const void *p, const char *dtype, long i) {
  if (!strcmp(dtype, "float32")) return ((const float *)p)[i];
  if (!strcmp(dtype, "float64")) return ((const double *)p)[i];
  if (!strcmp(dtype, "int32")) return ((const int32_t *)p)[i];
  if (!strcmp(dtype, "uint32")) return ((const uint32_t *)p)[i];
  if (!strcmp(dtype, "int64")) return (double)((const int64_t *)p)[i];
  if (!strcmp(dtype, "uint64")) return (double)((const uint64_t *)p)[i];
  if (!strcmp(dtype, "int8")) return ((const int8_t *)p)[i];
  if (!strcmp(dtype, "uint8")) return ((const uint8_t *)p)[i];
  if (!strcmp(dtype, "int16")) return ((const int16_t *)p)[i];
  if (!strcmp(dtype, "uint16")) return ((const uint16_t *)p)[i];
  kc_die("unsupported dtype", dtype);
  return 0;
}

/* Compare one output with DIR/NAME.expected.bin (exactly for integers). */
static void kc_check(kc_run *r, const char *name) {
  kc_arg *a = kc_find(r, name);
  int is_float = a->dtype[0] == 'f';
  long bytes = a->count * kc_dtype_size(a->dtype);
  void *want = kc_read_file(r->dir, name, ".expected.bin", bytes);
  long bad = 0, first = -1;
  for (long i = 0; i < a->count; i++) {
    double g = kc_get(a->data, a->dtype, i), w = kc_get(want, a->dtype, i);
    int ok = is_float ? (fabs(g - w) <= r->atol + r->rtol * fabs(w)) : (g == w);
    if (!ok) {
      if (first < 0) first = i;
      bad++;
    }
  }
  if (bad) {
    fprintf(stderr, "kerncast-c: %s: %ld of %ld elements differ, first at [%ld]: got %.9g, expected %.9g\n",
            name, bad, a->count, first, kc_get(a->data, a->dtype, first), kc_get(want, a->dtype, first));
    r->failures++;
  }
  free(want);
}

static int kc_finish(kc_run *r) {
  printf("kerncast-c: kernel=%s roi_seconds=%.9f status=%s\n", r->kernel, r->roi_seconds,
         r->failures ? "mismatch" : "ok");
  for (int i = 0; i < r->nargs; i++) free(r->args[i].data);
  return r->failures ? 1 : 0;
}

#endif
