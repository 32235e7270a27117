// Atomic-contention micro-benchmark: every work-item adds 1 to bin (key & (nbins - 1)) of a
// global array with an atomic add. With uniform random keys, nbins sets the contention:
// one bin serialises every update on one address, a million bins spread them over 4 MB.

__kernel void atomic_contention(__global const uint* restrict keys, __global int* bins, int n,
                                int nbins) {
  int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
  if (i < n) atomic_add(&bins[keys[i] & (uint)(nbins - 1)], 1);
}
