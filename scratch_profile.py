import cProfile, io, pstats, sys, time
sys.path.insert(0, "src")
from kerncast.corpus import get_kernel
from kerncast.measure._factory import make_backend
from kerncast.measure._api import monitor_for
from kerncast.measure._timing import TimingPolicy

for name, tun in (("coulomb_potential", {"bx": 16, "by": 2, "unroll": 1}),
                  ("convolve_cols", {"bx": 16, "by": 8, "py": 1, "radius": 2})):
    k = get_kernel(name)
    cfg = k.launch("large", tun)
    for sms in (16, 32):
        t0 = time.time()
        b = make_backend("cupy", device="h200", sm_count=sms)
        mon = monitor_for(b)
        print(name, sms, "backend", round(time.time() - t0, 2), flush=True)
        for i in range(2):
            t = time.time()
            pr = cProfile.Profile(); pr.enable()
            row = b.measure(k, cfg, policy=TimingPolicy(), monitor=mon, experiment="sm-sweep",
                            sm_count_requested=sms, prep_dir="/tmp/prep")
            pr.disable()
            print(name, sms, i, round(time.time() - t, 2), row["status"], row.get("time_median_s"),
                  row.get("repetitions"), flush=True)
            s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("cumulative").print_stats(22)
            print("\n".join(s.getvalue().splitlines()[6:40]))
        b.close()
