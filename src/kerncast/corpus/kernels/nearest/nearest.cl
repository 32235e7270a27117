// Nearest-neighbour search, distance pass: the great-circle (haversine) distance in km
// from a query point to every record (latitude, longitude in degrees, float32 pairs).

#ifndef IPT
#define IPT 1  // records per work-item, the group size apart
#endif

#define DEG2RAD 0.017453292519943295f
#define EARTH_DIAMETER_KM 12742.0f

__kernel void nearest_distance(__global const float2* restrict records,
                               __global float* restrict dist, int n, float qlat, float qlon) {
  float qla = qlat * DEG2RAD, qlo = qlon * DEG2RAD;
  float cos_qla = cos(qla);
  int first = get_group_id(0) * get_local_size(0) * IPT + get_local_id(0);
#pragma unroll
  for (int j = 0; j < IPT; j++) {
    int i = first + j * (int)get_local_size(0);
    if (i < n) {
      float2 r = records[i];
      float la = r.x * DEG2RAD, lo = r.y * DEG2RAD;
      float s_lat = sin(0.5f * (la - qla));
      float s_lon = sin(0.5f * (lo - qlo));
      float h = s_lat * s_lat + cos(la) * cos_qla * s_lon * s_lon;
      dist[i] = EARTH_DIAMETER_KM * asin(sqrt(h));
    }
  }
}
