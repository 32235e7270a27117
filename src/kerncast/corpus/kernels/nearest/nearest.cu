// Nearest-neighbour search, distance pass: the great-circle (haversine) distance in km
// from a query point to every record (latitude, longitude in degrees, float32 pairs).
// Selecting the k nearest is left to the host.

#ifndef IPT
#define IPT 1  // records per thread, blockDim apart
#endif

#define DEG2RAD 0.017453292519943295f
#define EARTH_DIAMETER_KM 12742.0f

extern "C" __global__ void nearest_distance(const float2* __restrict__ records,
                                            float* __restrict__ dist, int n, float qlat,
                                            float qlon) {
  float qla = qlat * DEG2RAD, qlo = qlon * DEG2RAD;
  float cos_qla = cosf(qla);
  int first = blockIdx.x * blockDim.x * IPT + threadIdx.x;
#pragma unroll
  for (int j = 0; j < IPT; j++) {
    int i = first + j * blockDim.x;
    if (i < n) {
      float2 r = records[i];
      float la = r.x * DEG2RAD, lo = r.y * DEG2RAD;
      float s_lat = sinf(0.5f * (la - qla));
      float s_lon = sinf(0.5f * (lo - qlo));
      float h = s_lat * s_lat + cosf(la) * cos_qla * s_lon * s_lon;
      dist[i] = EARTH_DIAMETER_KM * asinf(sqrtf(h));
    }
  }
}
