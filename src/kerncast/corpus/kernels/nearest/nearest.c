/* Haversine distance from a query point to every record, single-threaded. */
#include "kc_harness.h"

#define DEG2RAD 0.017453292519943295f
#define EARTH_DIAMETER_KM 12742.0f

__attribute__((noinline)) void roi_nearest_distance(const float *records, float *dist, int n,
                                                    float qlat, float qlon) {
  float qla = qlat * DEG2RAD, qlo = qlon * DEG2RAD;
  float cos_qla = cosf(qla);
  for (int i = 0; i < n; i++) {
    float la = records[2 * i] * DEG2RAD, lo = records[2 * i + 1] * DEG2RAD;
    float s_lat = sinf(0.5f * (la - qla));
    float s_lon = sinf(0.5f * (lo - qlo));
    float h = s_lat * s_lat + cosf(la) * cos_qla * s_lon * s_lon;
    dist[i] = EARTH_DIAMETER_KM * asinf(sqrtf(h));
  }
}

int main(int argc, char **argv) {
  kc_run r;
  kc_init(&r, argc, argv);
  KC_ROI_BEGIN(&r);
  roi_nearest_distance(kc_buffer(&r, "records"), kc_buffer(&r, "dist"), (int)kc_int(&r, "n"),
                       (float)kc_float(&r, "qlat"), (float)kc_float(&r, "qlon"));
  KC_ROI_END(&r);
  kc_check(&r, "dist");
  return kc_finish(&r);
}
