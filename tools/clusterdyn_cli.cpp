// clusterdyn command-line tool: model information, verification against reference data, quick
// timings. Usage: see usage() below and docs/cli.md.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "cli_json.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "reference_verify.hpp"

using namespace clusterdyn;

namespace {

constexpr int kExitOk = 0, kExitFailure = 1, kExitUsage = 2;

const char* kUsage =
    "usage: clusterdyn <command> [arguments]\n"
    "\n"
    "commands:\n"
    "  info MODEL.urdf [--floating-base] [--json]\n"
    "      bodies, joints (type, parent, q/v index, limits), frames, dof counts, total mass\n"
    "  verify REFERENCE.json... [--models DIR] [--tol 1e-9]\n"
    "      recompute every sample of reference files (shared/reference/README.md format) and\n"
    "      print per quantity the max relative error |a - b| / max(1, |b|); exit 0 only if\n"
    "      every computed quantity is within the tolerance. --models: folder the file's\n"
    "      model.urdf is relative to (default: parent of the folder holding the JSON file)\n"
    "  bench MODEL.urdf [--calls N] [--json] [--floating-base]\n"
    "      median ns per call of forward kinematics (q, v), RNEA, ABA, CRBA at random states\n"
    "  help\n"
    "\n"
    "exit status: 0 success, 1 failure (bad model, verification failed), 2 usage error\n";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Minimal option parser: positional arguments plus --flags and --key value pairs.
struct Args {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> options;  // value "" for flags

  Args(int argc, char** argv, int first, const std::vector<std::string>& flags,
       const std::vector<std::string>& valued) {
    for (int i = first; i < argc; ++i) {
      const std::string a = argv[i];
      if (a.rfind("--", 0) != 0) {
        positional.push_back(a);
      } else if (std::find(flags.begin(), flags.end(), a) != flags.end()) {
        options.emplace_back(a, "");
      } else if (std::find(valued.begin(), valued.end(), a) != valued.end()) {
        if (i + 1 >= argc) throw UsageError(a + " needs a value");
        options.emplace_back(a, argv[++i]);
      } else {
        throw UsageError("unknown option " + a);
      }
    }
  }
  bool has(const std::string& name) const {
    for (const auto& o : options)
      if (o.first == name) return true;
    return false;
  }
  std::string value(const std::string& name, const std::string& fallback) const {
    std::string v = fallback;
    for (const auto& o : options)
      if (o.first == name) v = o.second;
    return v;
  }
};

double parseDouble(const std::string& s, const std::string& what) {
  try {
    size_t used = 0;
    const double x = std::stod(s, &used);
    if (used == s.size() && std::isfinite(x)) return x;
  } catch (const std::exception&) {
  }
  throw UsageError(what + ": not a number: '" + s + "'");
}

long parsePositive(const std::string& s, const std::string& what) {
  try {
    size_t used = 0;
    const long x = std::stol(s, &used);
    if (used == s.size() && x > 0) return x;
  } catch (const std::exception&) {
  }
  throw UsageError(what + ": not a positive integer: '" + s + "'");
}

Model loadForCli(const std::string& path, bool floatingBase) {
  ModelOptions options;
  options.floatingBase = floatingBase;
  return loadTreeModel(path, options);
}

int floatingBody(const Model& model) {
  for (int i = 0; i < model.nbodies; ++i)
    if (model.joints[i].type == JointType::Floating) return i;
  return -1;
}

std::string limitText(double x) {
  if (!std::isfinite(x)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

// ---------------------------------------------------------------------------------------------

int cmdInfo(const Args& args) {
  if (args.positional.size() != 1) throw UsageError("info needs exactly one MODEL.urdf");
  const Model model = loadForCli(args.positional[0], args.has("--floating-base"));
  if (args.has("--json")) {
    auto j = cli::modelInfoJson(model);
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << describeModel(model);
  std::cout << "  joints (q/v: first index; limits: lower upper velocity effort, '-' = none):\n";
  char line[512];
  for (int i = 0; i < model.nbodies; ++i) {
    const int iq = model.idx_q[i], iv = model.idx_v[i];
    const bool scalar = model.nqs[i] == 1 && model.nvs[i] == 1;
    const std::string parent = model.parent[i] >= 0 ? model.bodyNames[model.parent[i]] : "world";
    std::snprintf(line, sizeof line, "    %-30s %-9s %-24s -> %-24s q %-3d v %-3d",
                  model.jointNames[i].c_str(), jointTypeName(model.joints[i].type), parent.c_str(),
                  model.bodyNames[i].c_str(), iq, iv);
    std::cout << line;
    if (scalar)
      std::cout << "  [" << limitText(model.lowerPositionLimit[iq]) << ", "
                << limitText(model.upperPositionLimit[iq]) << "] "
                << limitText(model.velocityLimit[iv]) << " " << limitText(model.effortLimit[iv]);
    std::cout << "\n";
  }
  std::cout << "  frames (" << model.frames.size() << "):\n";
  for (const Frame& f : model.frames)
    std::cout << "    " << f.name << " -> body "
              << (f.body >= 0 ? model.bodyNames[f.body] : std::string("world"))
              << (f.isBody ? "" : " (fused)") << "\n";
  const int fb = floatingBody(model);
  std::cout << "  dof: nq = " << model.nq << ", nv = " << model.nv << ", floating base: "
            << (fb >= 0 ? "yes (joint '" + model.jointNames[fb] + "')" : std::string("no")) << "\n";
  std::snprintf(line, sizeof line, "  total mass: %.9g kg\n", model.totalMass());
  std::cout << line;
  return kExitOk;
}

// ---------------------------------------------------------------------------------------------

int cmdVerify(const Args& args) {
  if (args.positional.empty()) throw UsageError("verify needs at least one REFERENCE.json");
  verify::VerifyOptions options;
  options.modelsDir = args.value("--models", "");
  options.tolerance = parseDouble(args.value("--tol", "1e-9"), "--tol");
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& path : args.positional) {
    const verify::FileReport r = verify::verifyReferenceFile(path, options);
    std::cout << verify::formatReport(r) << std::flush;
    passed += r.count(verify::Outcome::Passed);
    failed += r.count(verify::Outcome::Failed);
    skipped += r.count(verify::Outcome::Skipped);
  }
  std::cout << "verify: " << passed << " passed, " << failed << " failed, " << skipped
            << " skipped\n";
  return failed == 0 ? kExitOk : kExitFailure;
}

// ---------------------------------------------------------------------------------------------

/// Median over batches of the mean time per call (ns). Calls are timed in batches so that the
/// clock overhead (~20 ns) does not dominate the short calls; fn(k) runs call number k.
double medianNsPerCall(const std::function<void(long)>& fn, long calls) {
  const long batch = std::clamp(calls / 100, 1L, 100L);
  const long nbatches = std::max(1L, calls / batch);
  for (long k = 0; k < std::max(200L, calls / 10); ++k) fn(k);  // warm-up
  std::vector<double> t(nbatches);
  long k = 0;
  for (long b = 0; b < nbatches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < batch; ++i) fn(k++);
    const auto t1 = std::chrono::steady_clock::now();
    t[b] = std::chrono::duration<double, std::nano>(t1 - t0).count() / batch;
  }
  std::nth_element(t.begin(), t.begin() + nbatches / 2, t.end());
  return t[nbatches / 2];
}

int cmdBench(const Args& args) {
  if (args.positional.size() != 1) throw UsageError("bench needs exactly one MODEL.urdf");
  const long calls = parsePositive(args.value("--calls", "20000"), "--calls");
  const Model model = loadForCli(args.positional[0], args.has("--floating-base"));
  Data data(model);

  // A pool of random states (fixed seed), cycled through by the timed calls.
  constexpr int kPool = 64;
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<VecX> qs, vs, as, taus;
  for (int k = 0; k < kPool; ++k) {
    qs.push_back(randomConfiguration(model, rng));
    VecX v(model.nv), a(model.nv), tau(model.nv);
    for (int i = 0; i < model.nv; ++i) v[i] = u(rng), a[i] = u(rng), tau[i] = u(rng);
    vs.push_back(v), as.push_back(a), taus.push_back(tau);
  }
  // Check once that every algorithm accepts the states (timed calls do not look at Status).
  const Status checks[] = {forwardKinematics(model, data, qs[0], vs[0]),
                           rnea(model, data, qs[0], vs[0], as[0]),
                           aba(model, data, qs[0], vs[0], taus[0]), crba(model, data, qs[0])};
  for (Status s : checks)
    if (s != Status::Ok) {
      std::cerr << "error: " << statusName(s) << ": " << data.errorMessage() << "\n";
      return kExitFailure;
    }

  volatile double sink = 0.0;
  struct Entry {
    const char* name;
    double ns;
  };
  std::vector<Entry> results = {
      {"fk", medianNsPerCall(
                 [&](long k) {
                   forwardKinematics(model, data, qs[k % kPool], vs[k % kPool]);
                   sink = sink + data.v.back()[0];
                 },
                 calls)},
      {"rnea", medianNsPerCall(
                   [&](long k) {
                     rnea(model, data, qs[k % kPool], vs[k % kPool], as[k % kPool]);
                     sink = sink + data.tau[0];
                   },
                   calls)},
      {"aba", medianNsPerCall(
                  [&](long k) {
                    aba(model, data, qs[k % kPool], vs[k % kPool], taus[k % kPool]);
                    sink = sink + data.ddq[0];
                  },
                  calls)},
      {"crba", medianNsPerCall(
                   [&](long k) {
                     crba(model, data, qs[k % kPool]);
                     sink = sink + data.M(0, 0);
                   },
                   calls)},
  };

  if (args.has("--json")) {
    nlohmann::ordered_json j;
    j["model"] = args.positional[0];
    j["name"] = model.name;
    j["nq"] = model.nq;
    j["nv"] = model.nv;
    j["calls"] = calls;
    j["state_pool"] = kPool;
    j["unit"] = "ns";
    for (const auto& e : results) j["median_ns"][e.name] = e.ns;
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "model '" << model.name << "' (nq = " << model.nq << ", nv = " << model.nv << "), "
              << calls << " calls per algorithm, " << kPool
              << " random states, median ns per call:\n";
    const char* labels[] = {"forward kinematics (q, v)", "rnea", "aba", "crba"};
    char line[128];
    for (size_t i = 0; i < results.size(); ++i) {
      std::snprintf(line, sizeof line, "  %-26s %10.1f ns\n", labels[i], results[i].ns);
      std::cout << line;
    }
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  // Model-loading warnings go to stderr so that --json output stays parseable.
  auto logger = spdlog::stderr_color_mt("clusterdyn");
  logger->set_pattern("clusterdyn: %l: %v");
  spdlog::set_default_logger(logger);

  if (argc < 2) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string cmd = argv[1];
  try {
    if (cmd == "help" || cmd == "--help" || cmd == "-h") {
      std::cout << kUsage;
      return kExitOk;
    }
    if (cmd == "info") return cmdInfo(Args(argc, argv, 2, {"--floating-base", "--json"}, {}));
    if (cmd == "verify") return cmdVerify(Args(argc, argv, 2, {}, {"--models", "--tol"}));
    if (cmd == "bench")
      return cmdBench(Args(argc, argv, 2, {"--floating-base", "--json"}, {"--calls"}));
    throw UsageError("unknown command '" + cmd + "'");
  } catch (const UsageError& e) {
    std::cerr << "clusterdyn: " << e.what() << "\n\n" << kUsage;
    return kExitUsage;
  } catch (const ModelError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitFailure;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return kExitFailure;
  }
}
