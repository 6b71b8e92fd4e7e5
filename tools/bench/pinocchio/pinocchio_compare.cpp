// Checks the values a Pinocchio bench program computed (its --dump FILE) against clusterdyn at the
// same states, so that side_by_side.py times two libraries that agree, variant by variant:
//
//   pinocchio_compare MODEL.urdf DUMP.json [--tol X] [--json]
//
// Maps Pinocchio's coordinates to clusterdyn's by joint name (python/tests/anchors_util.py's
// PinocchioMap in C++): free flyer q = [p, x y z w] on both sides, v = [v; omega] (Pinocchio)
// against [omega; v] (clusterdyn); a continuous joint's (cos, sin) is one angle; contact rows of
// a 6D contact are [linear; angular] (Pinocchio) against [angular; linear] (clusterdyn's Weld).
// Per quantity it prints the largest deviation max|pin - cd| / max(1, max|cd|) over the dumped
// states: ABA, RNEA, CRBA, the RNEA and ABA derivatives (tangent columns: both libraries use the
// joint's right exponential), M^-1 (of computeABADerivatives and of computeMinverse), and with
// contacts the Delassus matrix (both Pinocchio routines) and its damped inverse (rho 1e-6), of
// which Pinocchio 4.1 writes the upper triangle only (compared mirrored).
// Exit 1 when a deviation exceeds --tol (default 1e-9), 2 on usage errors.
// Links the clusterdyn build's libclusterdyn_core.a; no Pinocchio code (the dump is plain JSON).
#include <algorithm>
#include <clusterdyn/aba.hpp>
#include <clusterdyn/cluster_algorithms.hpp>
#include <clusterdyn/cluster_data.hpp>
#include <clusterdyn/cluster_model.hpp>
#include <clusterdyn/constraints.hpp>
#include <clusterdyn/crba.hpp>
#include <clusterdyn/derivatives.hpp>
#include <clusterdyn/mjcf.hpp>
#include <clusterdyn/rnea.hpp>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace clusterdyn;
using json = nlohmann::json;

Eigen::MatrixXd matrix(const json& j) {
  const long r = j.at("rows"), c = j.at("cols");
  const auto& d = j.at("data");
  if (static_cast<long>(d.size()) != r * c) throw std::runtime_error("dump: bad matrix size");
  Eigen::MatrixXd a(r, c);
  for (long i = 0; i < r; ++i)
    for (long k = 0; k < c; ++k) a(i, k) = d[i * c + k].get<double>();
  return a;
}

/// The upper triangle mirrored: Pinocchio 4.1's computeDelassusMatrix, computePvDelassusMatrix
/// and computeDampedDelassusMatrixInverse write the upper triangle only (the lower one keeps
/// whatever the output matrix held).
Eigen::MatrixXd upperMirrored(const Eigen::MatrixXd& a) {
  Eigen::MatrixXd s = a;
  s.triangularView<Eigen::StrictlyLower>() = a.transpose();
  return s;
}

double deviation(const Eigen::MatrixXd& pin, const Eigen::MatrixXd& cd) {
  if (pin.rows() != cd.rows() || pin.cols() != cd.cols()) return INFINITY;
  if (pin.size() == 0) return 0.0;
  return (pin - cd).cwiseAbs().maxCoeff() / std::max(1.0, cd.cwiseAbs().maxCoeff());
}

void check(Status s, const Data& data, const char* what) {
  if (s != Status::Ok)
    throw std::runtime_error(std::string(what) + ": " + statusName(s) + ": " + data.errorMessage());
}

int run(const std::string& urdf, const std::string& dumpPath, double tol, bool asJson) {
  std::ifstream in(dumpPath);
  if (!in) throw std::runtime_error("cannot read " + dumpPath);
  const json dump = json::parse(in);

  const ClusterModel cm = buildClusterModel(parseModelFile(urdf));
  const Model& model = cm.treeModel;
  const int nv = model.nv;
  if (dump.at("nv").get<int>() != nv)
    throw std::runtime_error("nv differs: Pinocchio " + dump.at("nv").dump() + ", clusterdyn " +
                             std::to_string(nv));

  // v_pin = P v_cd; q_cd from q_pin joint by joint.
  Eigen::MatrixXd P = Eigen::MatrixXd::Zero(nv, nv);
  struct QMap {
    int pinQ, cdQ, nq;
    bool angleFromCosSin;
  };
  std::vector<QMap> qmap;
  for (const json& j : dump.at("joints")) {
    const std::string name = j.at("name"), type = j.at("type");
    const auto it = std::find(model.jointNames.begin(), model.jointNames.end(), name);
    if (it == model.jointNames.end())
      throw std::runtime_error("Pinocchio joint '" + name + "' is not in clusterdyn's model");
    const int b = static_cast<int>(it - model.jointNames.begin());
    const int jnv = j.at("nv"), jnq = j.at("nq"), iv = j.at("idx_v"), iq = j.at("idx_q");
    if (jnv != model.nvs[b])
      throw std::runtime_error("joint '" + name + "': nv " + std::to_string(jnv) + " vs " +
                               std::to_string(model.nvs[b]));
    const bool freeFlyer = type == "JointModelFreeFlyer";
    const bool unbounded = type.find("RUB") != std::string::npos ||
                           type.find("RevoluteUnbounded") != std::string::npos;
    for (int k = 0; k < jnv; ++k) {
      const int cdk = freeFlyer ? (k + 3) % 6 : k;  // Pinocchio [v; omega] <- clusterdyn [omega; v]
      P(iv + k, model.idx_v[b] + cdk) = 1.0;
    }
    if (unbounded) {
      if (jnq != 2 || model.nqs[b] != 1) throw std::runtime_error("joint '" + name + "': nq");
      qmap.push_back({iq, model.idx_q[b], 1, true});
    } else {
      if (jnq != model.nqs[b]) throw std::runtime_error("joint '" + name + "': nq differs");
      qmap.push_back({iq, model.idx_q[b], jnq, false});
    }
  }
  if ((P.colwise().sum().array() != 1.0).any())
    throw std::runtime_error("the joints do not cover clusterdyn's velocity coordinates");

  // Contacts: the same set as the bench's, and the row permutation Pinocchio <- clusterdyn.
  std::unique_ptr<ConstraintSet> set;
  std::unique_ptr<ConstraintData> con;
  int m = 0;
  std::vector<int> rowOf;  // Pinocchio row i = clusterdyn row rowOf[i]
  if (!dump.at("contacts").empty()) {
    set = std::make_unique<ConstraintSet>(cm);
    for (const json& c : dump.at("contacts")) {
      const int rows = c.at("rows");
      set->addContact(c.at("link").get<std::string>(),
                      rows == 3 ? ConstraintType::Point : ConstraintType::Weld);
      for (int k = 0; k < rows; ++k) rowOf.push_back(m + (rows == 6 ? (k + 3) % 6 : k));
      m += rows;
    }
    con = std::make_unique<ConstraintData>(cm, *set);
  }
  Eigen::MatrixXd R = Eigen::MatrixXd::Zero(m, m);
  for (int i = 0; i < m; ++i) R(i, rowOf[i]) = 1.0;

  Data data(model);
  DerivativeData dd(model);
  ClusterData cdata(cm);
  std::map<std::string, double> dev;  // quantity -> max deviation over the states
  auto note = [&](const std::string& key, const Eigen::MatrixXd& pin, const Eigen::MatrixXd& cd) {
    dev[key] = std::max(dev[key], deviation(pin, cd));
  };
  for (const json& st : dump.at("states")) {
    const Eigen::VectorXd qp = matrix(st.at("q")), vp = matrix(st.at("v")), ap = matrix(st.at("a")),
                          tp = matrix(st.at("tau"));
    VecX q(model.nq);
    for (const QMap& e : qmap)
      if (e.angleFromCosSin)
        q[e.cdQ] = std::atan2(qp[e.pinQ + 1], qp[e.pinQ]);
      else
        q.segment(e.cdQ, e.nq) = qp.segment(e.pinQ, e.nq);
    const VecX v = P.transpose() * vp, a = P.transpose() * ap, tau = P.transpose() * tp;
    check(aba(model, data, q, v, tau), data, "aba");
    note("aba", matrix(st.at("aba")), P * data.ddq);
    check(rnea(model, data, q, v, a), data, "rnea");
    note("rnea", matrix(st.at("rnea")), P * data.tau);
    check(crba(model, data, q), data, "crba");
    note("crba", matrix(st.at("crba")), P * data.M * P.transpose());
    check(computeRNEADerivatives(model, data, dd, q, v, a), data, "computeRNEADerivatives");
    note("rnea_dq", matrix(st.at("rnea_dq")), P * dd.dtau_dq * P.transpose());
    note("rnea_dv", matrix(st.at("rnea_dv")), P * dd.dtau_dv * P.transpose());
    check(computeABADerivatives(model, data, dd, q, v, tau), data, "computeABADerivatives");
    note("aba_dq", matrix(st.at("aba_dq")), P * dd.ddq_dq * P.transpose());
    note("aba_dv", matrix(st.at("aba_dv")), P * dd.ddq_dv * P.transpose());
    note("aba_minv", matrix(st.at("aba_minv")), P * dd.Minv * P.transpose());
    check(computeMinverse(model, data, dd, q), data, "computeMinverse");
    note("minverse", matrix(st.at("minverse")), P * dd.Minv * P.transpose());
    if (set) {
      if (delassusMatrix(cm, cdata, *set, *con, q) != Status::Ok)
        throw std::runtime_error(std::string("delassusMatrix: ") + cdata.errorMessage());
      note("delassus", upperMirrored(matrix(st.at("delassus"))), R * con->delassus * R.transpose());
      note("delassus_pv", upperMirrored(matrix(st.at("delassus_pv"))),
           R * con->delassus * R.transpose());
      if (dampedDelassusInverse(cm, cdata, *set, *con, q, 1e-6) != Status::Ok)
        throw std::runtime_error(std::string("dampedDelassusInverse: ") + cdata.errorMessage());
      note("damped_inverse", upperMirrored(matrix(st.at("damped_inverse"))),
           R * con->dampedInverse * R.transpose());
    }
  }
  bool ok = true;
  for (const auto& [k, d] : dev) ok = ok && d <= tol;
  if (asJson) {
    json out = {{"states", dump.at("states").size()},
                {"tolerance", tol},
                {"ok", ok},
                {"max_deviation", dev}};
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("Pinocchio %s against clusterdyn, %zu states, max |pin - cd| / max(1, |cd|):\n",
                dump.at("pinocchio").get<std::string>().c_str(), dump.at("states").size());
    for (const auto& [k, d] : dev)
      std::printf("  %-16s %9.2e%s\n", k.c_str(), d, d <= tol ? "" : "  > tolerance");
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> pos;
  double tol = 1e-9;
  bool asJson = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") {
      asJson = true;
    } else if (a == "--tol" && i + 1 < argc) {
      tol = std::atof(argv[++i]);
    } else if (!a.empty() && a[0] == '-') {
      pos.clear();
      break;
    } else {
      pos.push_back(a);
    }
  }
  if (pos.size() != 2 || !(tol > 0)) {
    std::fprintf(stderr, "usage: pinocchio_compare MODEL.urdf DUMP.json [--tol X] [--json]\n");
    return 2;
  }
  try {
    return run(pos[0], pos[1], tol, asJson);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pinocchio_compare: %s\n", e.what());
    return 1;
  }
}
