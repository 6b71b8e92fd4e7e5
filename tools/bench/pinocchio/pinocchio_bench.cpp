// Pinocchio side of tools/bench/side_by_side.py: median ns per call of Pinocchio's ABA, RNEA,
// CRBA and, with contacts, of its Delassus matrix, damped Delassus inverse and constrained
// forward dynamics, timed exactly like `clusterdyn bench` (tools/clusterdyn_cli.cpp) so that the
// two programs can be run interleaved on the same URDF and contact set:
//
//   pinocchio_bench MODEL.urdf [--calls N] [--json] [--contact 3:LINK|6:LINK]...
//                   [--only ALGO[,ALGO...]] [--mu X] [--tol X] [--max-iter N]
//
// Contacts as `clusterdyn bench --contact`: LINK's frame (the URDF link frame, i.e. Pinocchio's
// BODY frame of that name: its parent joint and placement) in contact with the world, 3D point
// or 6D weld, rows in the LOCAL frame, no Baumgarte terms.
//
// Timed (JSON key: call):
//   aba, rnea, crba               aba(q, v, tau), rnea(q, v, a), crba(q)   (Pinocchio's defaults)
//   delassus                      computeDelassusMatrix(q, mu = 0)          (public API)
//   delassus_pv                   computePvDelassusMatrix(q, mu = 0)        (PV-OSIMr)
//   damped_inverse                computeDampedDelassusMatrixInverse(q, 1e-6) (PV, unscaled)
//   constraint_dynamics           constraintDynamics with the default ProximalSettings
//                                 (mu 0, one iteration: the exact sparse KKT solve)
//   constrained_aba               constrainedABA (Sathya & Carpentier 2024) with the settings of
//                                 `clusterdyn bench` (--mu, --tol, --max-iter: iterations AFTER
//                                 the first pass, as clusterdyn's ProximalSettings::maxIterations)
// constrained_aba needs one contact type for the whole set: 4.1's pv.hxx picks the 3D or 6D
// branch from the constraint model's compile-time Size, so the set is a vector of
// PointAnchorConstraintModel (3D) or FrameAnchorConstraintModel (6D); a mixed set skips it.
//
// Before timing, the results at the first four states are checked against a dense oracle
// (J M^-1 J^T from the frame Jacobians and ABA; the constraint residual J ddq + gamma of both
// forward dynamics); the deviations are printed, a forward-dynamics failure is an error.
// Header-only use of Pinocchio (no PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION): the algorithms are
// inlined into this program.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/constrained-dynamics.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/delassus.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/jacobian.hpp>
#include <pinocchio/algorithm/joint-configuration.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/algorithm/pv.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/multibody.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "urdf_model.hpp"

namespace pin = pinocchio;

namespace {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* kUsage =
    "usage: pinocchio_bench MODEL.urdf [--calls N] [--json] [--contact 3:LINK|6:LINK]...\n"
    "                       [--only ALGO[,ALGO...]] [--mu X] [--tol X] [--max-iter N]\n"
    "                       [--dump FILE]\n";

struct Options {
  std::string urdf;
  long calls = 20000;
  bool json = false;
  std::vector<std::pair<int, std::string>> contacts;  // (3 or 6, link)
  std::vector<std::string> only;
  double mu = 1e-4, tol = 1e-10;  // clusterdyn::ProximalSettings defaults
  int maxIter = 50;
  std::string dump;  // --dump FILE: the values at the first kDumpStates states (JSON)
};

double parseNumber(const std::string& s, const std::string& what) {
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || !std::isfinite(x)) throw UsageError(what + ": not a number: '" + s + "'");
  return x;
}

Options parseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
      return argv[++i];
    };
    if (a == "--json") {
      o.json = true;
    } else if (a == "--calls") {
      const double c = parseNumber(value(), a);
      if (c < 1 || c != std::floor(c)) throw UsageError("--calls: not a positive integer");
      o.calls = static_cast<long>(c);
    } else if (a == "--contact") {
      const std::string c = value();
      if (c.size() < 3 || (c.compare(0, 2, "3:") != 0 && c.compare(0, 2, "6:") != 0))
        throw UsageError("--contact: expected 3:LINK or 6:LINK, got '" + c + "'");
      o.contacts.emplace_back(c[0] - '0', c.substr(2));
    } else if (a == "--dump") {
      o.dump = value();
    } else if (a == "--only") {
      std::stringstream ss(value());
      static const char* kNames[] = {"aba",
                                     "rnea",
                                     "crba",
                                     "delassus",
                                     "delassus_pv",
                                     "damped_inverse",
                                     "constraint_dynamics",
                                     "constrained_aba",
                                     "rnea_derivatives",
                                     "aba_derivatives",
                                     "minverse"};
      for (std::string s; std::getline(ss, s, ',');) {
        if (s.empty()) continue;
        if (std::find(std::begin(kNames), std::end(kNames), s) == std::end(kNames))
          throw UsageError("--only: unknown algorithm '" + s + "'");
        o.only.push_back(s);
      }
    } else if (a == "--mu") {
      o.mu = parseNumber(value(), a);
      if (!(o.mu > 0)) throw UsageError("--mu: must be > 0");
    } else if (a == "--tol") {
      o.tol = parseNumber(value(), a);
      if (!(o.tol > 0)) throw UsageError("--tol: must be > 0");
    } else if (a == "--max-iter") {
      const double n = parseNumber(value(), a);
      if (n < 0 || n != std::floor(n)) throw UsageError("--max-iter: not an integer >= 0");
      o.maxIter = static_cast<int>(n);
    } else if (a.size() > 1 && a[0] == '-') {
      throw UsageError("unknown option " + a);
    } else if (o.urdf.empty()) {
      o.urdf = a;
    } else {
      throw UsageError("exactly one MODEL.urdf");
    }
  }
  if (o.urdf.empty()) throw UsageError("missing MODEL.urdf");
  return o;
}

/// As `clusterdyn bench`: warm-up of max(200, N/10) calls, then N calls in batches of
/// clamp(N/100, 1, 100); the median over batches of the mean time per call (ns).
double medianNsPerCall(const std::function<void(long)>& fn, long calls) {
  const long batch = std::clamp(calls / 100, 1L, 100L);
  const long nbatches = std::max(1L, calls / batch);
  for (long k = 0; k < std::max(200L, calls / 10); ++k) fn(k);
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

template <class T>
using AlignedVector = std::vector<T, Eigen::aligned_allocator<T>>;

/// One contact: the link's frame (parent joint, placement in it) and its row count.
struct Contact {
  std::string link;
  int rows = 3;
  pin::JointIndex joint = 0;
  pin::SE3 placement = pin::SE3::Identity();
  pin::FrameIndex frame = 0;
};

/// Dense oracle: contact Jacobian J (m x nv, LOCAL rows; 3D: linear, 6D: linear then angular)
/// and gamma (classical acceleration of the contact points at ddq = 0) at (q, v).
void denseContactTerms(const pin::Model& model, pin::Data& data, const std::vector<Contact>& cs,
                       const Eigen::VectorXd& q, const Eigen::VectorXd& v, Eigen::MatrixXd& J,
                       Eigen::VectorXd& gamma) {
  int m = 0;
  for (const Contact& c : cs) m += c.rows;
  J.setZero(m, model.nv);
  gamma.setZero(m);
  pin::computeJointJacobians(model, data, q);
  pin::forwardKinematics(model, data, q, v, Eigen::VectorXd::Zero(model.nv));
  pin::updateFramePlacements(model, data);
  int r = 0;
  for (const Contact& c : cs) {
    pin::Data::Matrix6x J6 = pin::Data::Matrix6x::Zero(6, model.nv);
    pin::getFrameJacobian(model, data, c.frame, pin::LOCAL, J6);
    const pin::Motion vf = pin::getFrameVelocity(model, data, c.frame, pin::LOCAL);
    const pin::Motion af = pin::getFrameAcceleration(model, data, c.frame, pin::LOCAL);
    J.middleRows(r, c.rows) = J6.topRows(c.rows);
    if (c.rows == 3)
      gamma.segment<3>(r) = af.linear() + vf.angular().cross(vf.linear());
    else
      gamma.segment<6>(r) = af.toVector();
    r += c.rows;
  }
}

double maxAbs(const Eigen::MatrixXd& a) { return a.size() ? a.cwiseAbs().maxCoeff() : 0.0; }

/// JSON array of a matrix's entries, row by row.
void writeMatrix(std::FILE* f, const char* key, const Eigen::MatrixXd& a, bool last = false) {
  std::fprintf(f, "\"%s\": {\"rows\": %ld, \"cols\": %ld, \"data\": [", key,
               static_cast<long>(a.rows()), static_cast<long>(a.cols()));
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.cols(); ++j)
      std::fprintf(f, "%s%.17g", i + j ? ", " : "", a(i, j));
  std::fprintf(f, "]}%s\n", last ? "" : ",");
}

/// The upper triangle mirrored (Pinocchio's crba and computeMinverse fill the upper one).
Eigen::MatrixXd symmetricFromUpper(const Eigen::MatrixXd& a) {
  Eigen::MatrixXd s = a;
  s.triangularView<Eigen::StrictlyLower>() = a.transpose();
  return s;
}

constexpr int kDumpStates = 2;

/// --dump FILE: the model's joints (name, type, coordinate ranges), the contacts and, at the
/// first kDumpStates states of the pool, the state (q, v, a, tau) and every quantity the bench
/// times, in Pinocchio's conventions (free flyer v = [v; omega], spatial rows linear first),
/// full precision. tools/bench/pinocchio/pinocchio_compare.cpp checks them against clusterdyn.
void writeDump(const std::string& path, const pin::Model& model, const std::vector<Contact>& cs,
               const AlignedVector<pin::RigidConstraintModel>& rcm,
               AlignedVector<pin::RigidConstraintData>& rcd, const std::vector<Eigen::VectorXd>& qs,
               const std::vector<Eigen::VectorXd>& vs, const std::vector<Eigen::VectorXd>& as,
               const std::vector<Eigen::VectorXd>& taus) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) throw std::runtime_error("--dump: cannot write '" + path + "'");
  std::fprintf(f, "{\"pinocchio\": \"%s\", \"nq\": %d, \"nv\": %d,\n\"joints\": [",
               PINOCCHIO_VERSION, model.nq, model.nv);
  for (pin::JointIndex j = 1; j < static_cast<pin::JointIndex>(model.njoints); ++j)
    std::fprintf(f,
                 "%s\n  {\"name\": \"%s\", \"type\": \"%s\", \"idx_q\": %d, \"nq\": %d, "
                 "\"idx_v\": %d, \"nv\": %d}",
                 j > 1 ? "," : "", model.names[j].c_str(), model.joints[j].shortname().c_str(),
                 model.joints[j].idx_q(), model.joints[j].nq(), model.joints[j].idx_v(),
                 model.joints[j].nv());
  std::fprintf(f, "],\n\"contacts\": [");
  for (size_t i = 0; i < cs.size(); ++i)
    std::fprintf(f, "%s{\"link\": \"%s\", \"rows\": %d}", i ? ", " : "", cs[i].link.c_str(),
                 cs[i].rows);
  std::fprintf(f, "],\n\"states\": [\n");
  pin::Data d(model);
  pin::Data dd(model);
  if (!rcm.empty()) pin::initPvDelassus(model, dd, rcm);
  int m = 0;
  for (const auto& c : cs) m += c.rows;
  for (int k = 0; k < kDumpStates; ++k) {
    std::fprintf(f, "{\n");
    writeMatrix(f, "q", qs[k]);
    writeMatrix(f, "v", vs[k]);
    writeMatrix(f, "a", as[k]);
    writeMatrix(f, "tau", taus[k]);
    writeMatrix(f, "aba", pin::aba(model, d, qs[k], vs[k], taus[k]));
    writeMatrix(f, "rnea", pin::rnea(model, d, qs[k], vs[k], as[k]));
    writeMatrix(f, "crba", symmetricFromUpper(pin::crba(model, d, qs[k])));
    pin::computeRNEADerivatives(model, d, qs[k], vs[k], as[k]);
    writeMatrix(f, "rnea_dq", d.dtau_dq);
    writeMatrix(f, "rnea_dv", d.dtau_dv);
    pin::computeABADerivatives(model, d, qs[k], vs[k], taus[k]);
    writeMatrix(f, "aba_dq", d.ddq_dq);
    writeMatrix(f, "aba_dv", d.ddq_dv);
    writeMatrix(f, "aba_minv", symmetricFromUpper(d.Minv));
    pin::Data fresh(model);  // computeMinverse alone, on a workspace no other call has touched
    writeMatrix(f, "minverse", symmetricFromUpper(pin::computeMinverse(model, fresh, qs[k])),
                rcm.empty());
    if (!rcm.empty()) {
      Eigen::MatrixXd D(m, m), Dpv(m, m), Dinv(m, m);
      pin::computeDelassusMatrix(model, dd, qs[k], rcm, rcd, D, 0.0);
      pin::computePvDelassusMatrix(model, dd, qs[k], rcm, rcd, Dpv, 0.0);
      pin::computeDampedDelassusMatrixInverse(model, dd, qs[k], rcm, rcd, Dinv, 1e-6);
      writeMatrix(f, "delassus", symmetricFromUpper(D));  // 4.1 writes the upper triangle only
      writeMatrix(f, "delassus_pv", symmetricFromUpper(Dpv));
      writeMatrix(f, "damped_inverse", symmetricFromUpper(Dinv), true);
    }
    std::fprintf(f, "}%s\n", k + 1 < kDumpStates ? "," : "");
  }
  std::fprintf(f, "]}\n");
  if (std::fclose(f) != 0) throw std::runtime_error("--dump: cannot write '" + path + "'");
}

int run(const Options& o) {
  const pin::Model model = urdf_model::buildModel(o.urdf);
  pin::Data data(model);

  std::vector<Contact> contacts;
  int m = 0;
  for (const auto& [rows, link] : o.contacts) {
    if (!model.existBodyName(link)) throw std::runtime_error("unknown link '" + link + "'");
    Contact c;
    c.link = link;
    c.rows = rows;
    c.frame = model.getFrameId(link, pin::BODY);
    c.joint = model.frames[c.frame].parentJoint;
    c.placement = model.frames[c.frame].placement;
    if (c.joint == 0) throw std::runtime_error("link '" + link + "' is fixed to the world");
    contacts.push_back(c);
    m += rows;
  }
  const bool same3 =
      std::all_of(contacts.begin(), contacts.end(), [](const Contact& c) { return c.rows == 3; });
  const bool same6 =
      std::all_of(contacts.begin(), contacts.end(), [](const Contact& c) { return c.rows == 6; });

  // 64 random states (seed 12345): randomConfiguration inside the joint limits clipped to
  // [-1, 1] (free-flyer translation in [-1, 1]^3), v, a, tau uniform in [-1, 1].
  constexpr int kPool = 64;
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::VectorXd lo = model.lowerPositionLimit.cwiseMax(-1.0);
  Eigen::VectorXd hi = model.upperPositionLimit.cwiseMin(1.0);
  for (int i = 0; i < lo.size(); ++i)
    if (!(lo[i] < hi[i])) lo[i] = -1.0, hi[i] = 1.0;
  std::vector<Eigen::VectorXd> qs, vs, as, taus;
  for (int k = 0; k < kPool; ++k) {
    qs.push_back(pin::randomConfiguration(model, lo, hi));
    Eigen::VectorXd v(model.nv), a(model.nv), tau(model.nv);
    for (int i = 0; i < model.nv; ++i) v[i] = u(rng), a[i] = u(rng), tau[i] = u(rng);
    vs.push_back(v), as.push_back(a), taus.push_back(tau);
  }

  AlignedVector<pin::RigidConstraintModel> rcm;
  AlignedVector<pin::RigidConstraintData> rcd;
  for (const Contact& c : contacts) {
    rcm.emplace_back(c.rows == 3 ? pin::CONTACT_3D : pin::CONTACT_6D, model, c.joint, c.placement,
                     pin::LOCAL);
    rcd.emplace_back(rcm.back());
  }
  if (!o.dump.empty()) writeDump(o.dump, model, contacts, rcm, rcd, qs, vs, as, taus);

  auto wanted = [&](const std::string& name) {
    return o.only.empty() || std::find(o.only.begin(), o.only.end(), name) != o.only.end();
  };
  volatile double sink = 0.0;
  std::vector<std::pair<std::string, double>> results;
  auto timed = [&](const std::string& name, const std::function<void(long)>& fn) {
    if (wanted(name)) results.emplace_back(name, medianNsPerCall(fn, o.calls));
  };

  timed("aba", [&](long k) {
    pin::aba(model, data, qs[k % kPool], vs[k % kPool], taus[k % kPool]);
    sink = sink + data.ddq[0];
  });
  timed("rnea", [&](long k) {
    pin::rnea(model, data, qs[k % kPool], vs[k % kPool], as[k % kPool]);
    sink = sink + data.tau[0];
  });
  timed("crba", [&](long k) {
    pin::crba(model, data, qs[k % kPool]);
    sink = sink + data.M(0, 0);
  });
  timed("rnea_derivatives", [&](long k) {
    pin::computeRNEADerivatives(model, data, qs[k % kPool], vs[k % kPool], as[k % kPool]);
    sink = sink + data.dtau_dq(0, 0);
  });
  timed("aba_derivatives", [&](long k) {
    pin::computeABADerivatives(model, data, qs[k % kPool], vs[k % kPool], taus[k % kPool]);
    sink = sink + data.ddq_dq(0, 0);
  });
  timed("minverse", [&](long k) {
    pin::computeMinverse(model, data, qs[k % kPool]);
    sink = sink + data.Minv(0, 0);
  });

  struct {
    double delassus = 0, delassusPv = 0, dampedInverse = 0, constraintDynamics = 0,
           constrainedAba = 0;
  } check;
  double pvIterations = -1.0;  // mean constrainedABA iterations after the first pass
  std::string notes;
  if (!contacts.empty()) {
    pin::Data dData(model), fdData(model), pvData(model), oracle(model);
    pin::initPvDelassus(model, dData, rcm);
    pin::initConstraintDynamics(model, fdData, rcm, rcd);
    Eigen::MatrixXd D(m, m), Dpv(m, m), Dinv(m, m);
    const double rho = 1e-6;
    pin::ProximalSettings exact;  // mu 0, one iteration: the exact KKT solve
    pin::ProximalSettings prox(o.tol, o.mu, o.maxIter + 1);  // max_iter counts the first pass

    // constrainedABA on a homogeneous set of typed constraint models.
    AlignedVector<pin::PointAnchorConstraintModel> pcm;
    AlignedVector<pin::PointAnchorConstraintData> pcd;
    AlignedVector<pin::FrameAnchorConstraintModel> fcm;
    AlignedVector<pin::FrameAnchorConstraintData> fcd;
    for (const Contact& c : contacts) {
      if (same3)
        pcm.emplace_back(model, c.joint, c.placement), pcd.push_back(pcm.back().createData());
      if (same6)
        fcm.emplace_back(model, c.joint, c.placement), fcd.push_back(fcm.back().createData());
    }
    if (same3) pin::initPvSolver(model, pvData, pcm);
    if (same6) pin::initPvSolver(model, pvData, fcm);
    auto cAba = [&](long k, pin::ProximalSettings& s) {
      if (same3)
        pin::constrainedABA(model, pvData, qs[k % kPool], vs[k % kPool], taus[k % kPool], pcm, pcd,
                            s);
      else
        pin::constrainedABA(model, pvData, qs[k % kPool], vs[k % kPool], taus[k % kPool], fcm, fcd,
                            s);
    };

    // Checks at the first states against the dense oracle: D = J M^-1 J^T with M^-1 J^T from
    // ABA (zero gravity and velocity), independent of the CRBA's triangle convention. The
    // forward dynamics must meet J ddq + gamma = 0 (1e-6 relative to gamma; the proximal
    // tolerance is absolute); the deviations of the Delassus routines are reported (JSON
    // "oracle_check", a warning above 1e-6), not hidden (the damped inverse loses digits at
    // rho 1e-6: docs/benchmarks.md). side_by_side.py checks the contact problem itself.
    pin::Model zeroGravity = model;
    zeroGravity.gravity.setZero();
    pin::Data zd(zeroGravity);
    for (int k = 0; k < 4; ++k) {
      Eigen::MatrixXd J;
      Eigen::VectorXd gamma;
      denseContactTerms(model, oracle, contacts, qs[k], vs[k], J, gamma);
      Eigen::MatrixXd MinvJt(model.nv, m);
      for (int c = 0; c < m; ++c)
        MinvJt.col(c) = pin::aba(zeroGravity, zd, qs[k], Eigen::VectorXd::Zero(model.nv),
                                 Eigen::VectorXd(J.row(c).transpose()));
      const Eigen::MatrixXd Dd = J * MinvJt;
      const double scale = std::max(1.0, maxAbs(Dd));
      pin::computeDelassusMatrix(model, dData, qs[k], rcm, rcd, D, 0.0);
      pin::computePvDelassusMatrix(model, dData, qs[k], rcm, rcd, Dpv, 0.0);
      pin::computeDampedDelassusMatrixInverse(model, dData, qs[k], rcm, rcd, Dinv, rho);
      const Eigen::MatrixXd I = Eigen::MatrixXd::Identity(m, m);
      // 4.1's three routines write the upper triangle only (the lower one keeps the matrix's
      // previous contents): compared mirrored.
      check.delassus = std::max(check.delassus, maxAbs(symmetricFromUpper(D) - Dd) / scale);
      check.delassusPv = std::max(check.delassusPv, maxAbs(symmetricFromUpper(Dpv) - Dd) / scale);
      check.dampedInverse =
          std::max(check.dampedInverse, maxAbs(symmetricFromUpper(Dinv) * (Dd + rho * I) - I));
      const double gscale = std::max(1.0, gamma.cwiseAbs().maxCoeff());
      const Eigen::VectorXd& ddq =
          pin::constraintDynamics(model, fdData, qs[k], vs[k], taus[k], rcm, rcd, exact);
      check.constraintDynamics =
          std::max(check.constraintDynamics, (J * ddq + gamma).cwiseAbs().maxCoeff() / gscale);
      if (same3 || same6) {
        cAba(k, prox);
        check.constrainedAba =
            std::max(check.constrainedAba, (J * pvData.ddq + gamma).cwiseAbs().maxCoeff() / gscale);
      }
    }
    if (!(check.constraintDynamics < 1e-6 && check.constrainedAba < 1e-6)) {
      std::fprintf(stderr,
                   "error: check against the dense oracle failed: constraintDynamics residual "
                   "%.3g, constrainedABA residual %.3g (relative to gamma)\n",
                   check.constraintDynamics, check.constrainedAba);
      return 1;
    }
    if (!(check.delassus < 1e-6 && check.delassusPv < 1e-6))
      std::fprintf(stderr,
                   "warning: Pinocchio's Delassus deviates from the dense oracle: %.3g, PV %.3g "
                   "(relative; timed anyway, reported in oracle_check)\n",
                   check.delassus, check.delassusPv);
    if ((same3 || same6) && wanted("constrained_aba")) {
      // Iterations used (after the first pass), from the smallest max_iter that converges.
      double total = 0.0;
      for (int k = 0; k < kPool; ++k) {
        int it = o.maxIter;
        for (int n = 1; n <= o.maxIter; ++n) {
          pin::ProximalSettings s(o.tol, o.mu, n + 1);
          cAba(k, s);
          if (s.absolute_residual >= 0 && s.absolute_residual <= o.tol) {
            it = n;
            break;
          }
        }
        total += it;
      }
      pvIterations = total / kPool;
    } else if (!(same3 || same6)) {
      notes = "constrained_aba skipped: Pinocchio 4.1's constrainedABA needs one contact type";
    }

    timed("delassus", [&](long k) {
      pin::computeDelassusMatrix(model, dData, qs[k % kPool], rcm, rcd, D, 0.0);
      sink = sink + D(0, 0);
    });
    timed("delassus_pv", [&](long k) {
      pin::computePvDelassusMatrix(model, dData, qs[k % kPool], rcm, rcd, Dpv, 0.0);
      sink = sink + Dpv(0, 0);
    });
    timed("damped_inverse", [&](long k) {
      pin::computeDampedDelassusMatrixInverse(model, dData, qs[k % kPool], rcm, rcd, Dinv, rho);
      sink = sink + Dinv(0, 0);
    });
    timed("constraint_dynamics", [&](long k) {
      pin::constraintDynamics(model, fdData, qs[k % kPool], vs[k % kPool], taus[k % kPool], rcm,
                              rcd, exact);
      sink = sink + fdData.ddq[0];
    });
    if (same3 || same6)
      timed("constrained_aba", [&](long k) {
        cAba(k, prox);
        sink = sink + pvData.ddq[0];
      });
  }

  // The Delassus matrix at the neutral configuration, for the cross-library check of
  // side_by_side.py: its trace and sorted diagonal do not depend on the row order.
  std::vector<double> neutralDiag;
  if (!contacts.empty()) {
    Eigen::MatrixXd J;
    Eigen::VectorXd gamma;
    pin::Data nd(model);
    const Eigen::VectorXd q0 = pin::neutral(model), v0 = Eigen::VectorXd::Zero(model.nv);
    denseContactTerms(model, nd, contacts, q0, v0, J, gamma);
    pin::Model zeroGravity = model;
    zeroGravity.gravity.setZero();
    pin::Data zd(zeroGravity);
    for (int i = 0; i < m; ++i)
      neutralDiag.push_back(
          J.row(i).dot(pin::aba(zeroGravity, zd, q0, v0, Eigen::VectorXd(J.row(i).transpose()))));
    std::sort(neutralDiag.begin(), neutralDiag.end());
  }

  std::string name = o.urdf.substr(o.urdf.find_last_of('/') + 1);
  if (o.json) {
    std::printf("{\n  \"model\": \"%s\",\n  \"name\": \"%s\",\n  \"pinocchio\": \"%s\",\n",
                o.urdf.c_str(), model.name.c_str(), PINOCCHIO_VERSION);
    std::printf("  \"nq\": %d,\n  \"nv\": %d,\n  \"calls\": %ld,\n  \"state_pool\": %d,\n",
                model.nq, model.nv, o.calls, kPool);
    if (!contacts.empty()) {
      std::printf("  \"contacts\": [");
      for (size_t i = 0; i < contacts.size(); ++i)
        std::printf("%s\"%d:%s\"", i ? ", " : "", contacts[i].rows, contacts[i].link.c_str());
      std::printf("],\n  \"constraint_rows\": %d,\n", m);
      std::printf("  \"prox\": {\"mu\": %.17g, \"tolerance\": %.17g, \"max_iterations\": %d},\n",
                  o.mu, o.tol, o.maxIter);
      if (pvIterations >= 0) std::printf("  \"constrained_aba_iterations\": %.4g,\n", pvIterations);
      if (!notes.empty()) std::printf("  \"note\": \"%s\",\n", notes.c_str());
      std::printf(
          "  \"oracle_check\": {\"delassus\": %.3g, \"delassus_pv\": %.3g, \"damped_inverse\": "
          "%.3g, \"constraint_dynamics\": %.3g, \"constrained_aba\": %.3g},\n",
          check.delassus, check.delassusPv, check.dampedInverse, check.constraintDynamics,
          check.constrainedAba);
      std::printf("  \"delassus_neutral_diagonal\": [");
      for (size_t i = 0; i < neutralDiag.size(); ++i)
        std::printf("%s%.17g", i ? ", " : "", neutralDiag[i]);
      std::printf("],\n");
    }
    std::printf("  \"unit\": \"ns\",\n  \"median_ns\": {");
    for (size_t i = 0; i < results.size(); ++i)
      std::printf("%s\n    \"%s\": %.3f", i ? "," : "", results[i].first.c_str(),
                  results[i].second);
    std::printf("\n  }\n}\n");
  } else {
    std::printf("%s (Pinocchio %s, nq = %d, nv = %d", name.c_str(), PINOCCHIO_VERSION, model.nq,
                model.nv);
    if (!contacts.empty()) std::printf("; %zu contacts, m = %d rows", contacts.size(), m);
    std::printf("), %ld calls per algorithm, %d random states, median ns per call:\n", o.calls,
                kPool);
    for (const auto& [algo, ns] : results) std::printf("  %-22s %10.1f ns\n", algo.c_str(), ns);
    if (pvIterations >= 0) std::printf("  constrainedABA iterations (mean): %.2f\n", pvIterations);
    if (!notes.empty()) std::printf("  note: %s\n", notes.c_str());
    if (!contacts.empty())
      std::printf(
          "  oracle check (max over 4 states): Delassus %.3g, PV Delassus %.3g (relative), "
          "damped inverse |Dinv (D + rho I) - I| %.3g, residuals constraintDynamics %.3g, "
          "constrainedABA %.3g (relative to gamma)\n",
          check.delassus, check.delassusPv, check.dampedInverse, check.constraintDynamics,
          check.constrainedAba);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(parseArgs(argc, argv));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "pinocchio_bench: %s\n%s", e.what(), kUsage);
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
