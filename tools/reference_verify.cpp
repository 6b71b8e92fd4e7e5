// Recomputes the samples of a reference file (shared/reference/README.md) with clusterdyn and
// compares by name. See reference_verify.hpp for the error measure.
#include "reference_verify.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "clusterdyn/clusterdyn.hpp"
#include "dense_oracles.hpp"

namespace clusterdyn::verify {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

const char* outcomeName(Outcome o) {
  switch (o) {
    case Outcome::Passed:
      return "passed";
    case Outcome::Failed:
      return "FAILED";
    case Outcome::Skipped:
      return "skipped";
  }
  return "?";
}

int FileReport::count(Outcome o) const {
  int n = 0;
  for (const auto& q : quantities)
    if (q.outcome == o) ++n;
  if (o == Outcome::Failed && !error.empty()) ++n;
  return n;
}

namespace {

/// A malformed reference file or a model that does not match it.
struct VerifyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// ---------------------------------------------------------------------------------------------
// JSON access with readable errors.

const json& at(const json& j, const char* key, const std::string& where) {
  if (!j.is_object() || !j.contains(key))
    throw VerifyError(where + ": missing key \"" + key + "\"");
  return j.at(key);
}

double number(const json& j, const std::string& where) {
  if (!j.is_number()) throw VerifyError(where + ": expected a number, got " + j.dump());
  return j.get<double>();
}

std::string text(const json& j, const std::string& where) {
  if (!j.is_string()) throw VerifyError(where + ": expected a string");
  return j.get<std::string>();
}

std::vector<std::string> strings(const json& j, const std::string& where) {
  if (!j.is_array()) throw VerifyError(where + ": expected an array of strings");
  std::vector<std::string> out;
  for (const auto& e : j) out.push_back(text(e, where));
  return out;
}

VecX numbers(const json& j, Eigen::Index n, const std::string& where) {
  if (!j.is_array() || (n >= 0 && static_cast<Eigen::Index>(j.size()) != n))
    throw VerifyError(where + ": expected an array of " + std::to_string(n) + " numbers");
  VecX out(j.size());
  for (size_t k = 0; k < j.size(); ++k) out[k] = number(j[k], where);
  return out;
}

MatX matrix(const json& j, Eigen::Index rows, Eigen::Index cols, const std::string& where) {
  if (!j.is_array() || static_cast<Eigen::Index>(j.size()) != rows)
    throw VerifyError(where + ": expected " + std::to_string(rows) + " rows");
  MatX out(rows, cols);
  for (Eigen::Index r = 0; r < rows; ++r) out.row(r) = numbers(j[r], cols, where).transpose();
  return out;
}

NamedVector namedVector(const json& j, const std::string& where) {
  if (!j.is_object()) throw VerifyError(where + ": expected an object {name: number}");
  NamedVector out;
  out.values.resize(j.size());
  int k = 0;
  for (auto it = j.begin(); it != j.end(); ++it, ++k) {
    out.names.push_back(it.key());
    out.values[k] = number(it.value(), where + "." + it.key());
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Error accumulation per quantity.

class Accumulator {
 public:
  explicit Accumulator(std::string name) { r_.name = std::move(name); }

  void add(double computed, double reference, int sample, const std::string& entry,
           const std::string* col = nullptr) {
    double abs = std::fabs(computed - reference);
    if (!std::isfinite(abs)) abs = std::numeric_limits<double>::infinity();
    const double rel = abs / std::max(1.0, std::fabs(reference));
    ++r_.entries;
    if (sample != lastSample_) lastSample_ = sample, ++r_.samples;
    r_.maxAbsError = std::max(r_.maxAbsError, abs);
    if (rel > r_.maxRelError || r_.worst.empty()) {
      r_.maxRelError = std::max(r_.maxRelError, rel);
      r_.worst = "sample " + std::to_string(sample) + ", " + entry + (col ? " / " + *col : "");
    }
  }
  /// A computation failed (library status) or the data did not match: the quantity fails.
  void fail(int sample, const std::string& why) {
    if (!failed_) r_.note = "sample " + std::to_string(sample) + ": " + why;
    failed_ = true;
  }
  /// Reason shown for a quantity that ends up with nothing compared (ignored otherwise).
  void skip(const std::string& why) {
    if (r_.note.empty() && r_.entries == 0 && !failed_) r_.note = why;
  }
  QuantityResult result(double tol) const {
    QuantityResult q = r_;
    if (failed_ || (r_.entries > 0 && !(r_.maxRelError <= tol)))
      q.outcome = Outcome::Failed;
    else if (r_.entries > 0)
      q.outcome = Outcome::Passed;
    else
      q.outcome = Outcome::Skipped;
    return q;
  }

 private:
  QuantityResult r_;
  int lastSample_ = -1;
  bool failed_ = false;
};

/// Accumulators in order of first use.
class Results {
 public:
  Accumulator& operator[](const std::string& name) {
    for (auto& a : list_)
      if (a.first == name) return a.second;
    list_.emplace_back(name, Accumulator(name));
    return list_.back().second;
  }
  std::vector<QuantityResult> finish(double tol) const {
    std::vector<QuantityResult> out;
    for (const auto& a : list_) out.push_back(a.second.result(tol));
    return out;
  }

 private:
  std::vector<std::pair<std::string, Accumulator>> list_;
};

/// Compares a computed named vector with a reference named vector (every reference name must be
/// present in the computed one).
void compareNamed(Accumulator& acc, const NamedVector& computed, const NamedVector& ref,
                  int sample) {
  for (size_t k = 0; k < ref.names.size(); ++k) {
    const auto it = std::find(computed.names.begin(), computed.names.end(), ref.names[k]);
    if (it == computed.names.end()) {
      acc.fail(sample, "no computed value for '" + ref.names[k] + "'");
      continue;
    }
    acc.add(computed.values[it - computed.names.begin()], ref.values[k], sample, ref.names[k]);
  }
}

void compareNamed(Accumulator& acc, const NamedMatrix& computed, const NamedMatrix& ref,
                  int sample) {
  auto index = [](const std::vector<std::string>& names, const std::string& n) {
    const auto it = std::find(names.begin(), names.end(), n);
    return it == names.end() ? -1 : static_cast<int>(it - names.begin());
  };
  for (size_t r = 0; r < ref.rows.size(); ++r) {
    const int cr = index(computed.rows, ref.rows[r]);
    if (cr < 0) {
      acc.fail(sample, "no computed row '" + ref.rows[r] + "'");
      continue;
    }
    for (size_t c = 0; c < ref.cols.size(); ++c) {
      const int cc = index(computed.cols, ref.cols[c]);
      if (cc < 0) {
        acc.fail(sample, "no computed column '" + ref.cols[c] + "'");
        continue;
      }
      acc.add(computed.values(cr, cc), ref.values(r, c), sample, ref.rows[r], &ref.cols[c]);
    }
  }
}

std::string statusText(Status s, const Data& data) {
  return std::string(statusName(s)) + ": " + data.errorMessage();
}

// ---------------------------------------------------------------------------------------------
// Pinocchio files.

/// Offset of a base token ("base:wx" ...) in clusterdyn's floating-joint velocity [w; v].
int baseTokenOffset(const std::string& name) {
  static const char* tokens[6] = {"base:wx", "base:wy", "base:wz", "base:vx", "base:vy", "base:vz"};
  for (int k = 0; k < 6; ++k)
    if (name == tokens[k]) return k;
  return -1;
}

/// Row of clusterdyn's [angular; linear] frame Jacobian / spatial vector for a constraint-row
/// component (x, y, z linear; rx, ry, rz angular).
int componentRow(const std::string& component) {
  static const char* comps[6] = {"rx", "ry", "rz", "x", "y", "z"};
  for (int k = 0; k < 6; ++k)
    if (component == comps[k]) return k;
  return -1;
}

struct ContactRow {
  std::string name;
  int frame = -1;
  int row = 0;             ///< row of the [angular; linear] frame quantities
  bool classical = false;  ///< 3D contact: classical acceleration as drift
};

class PinocchioVerifier {
 public:
  PinocchioVerifier(const json& doc, const std::string& urdfPath, Results& results)
      : doc_(doc), results_(results) {
    ModelOptions options;  // floating models carry their own type="floating" joint
    if (doc.contains("gravity")) options.gravity = numbers(doc["gravity"], 3, "gravity");
    // The cluster model of the URDF (the constraint algorithms run on it); its spanning tree is
    // the model of the tree quantities. The Pinocchio models are trees: y = q, ydd = ddq.
    cmodel_ = std::make_unique<ClusterModel>(loadModel(urdfPath, options));
    model_ = cmodel_->treeModel;
    data_ = std::make_unique<Data>(model_);
    mapCoordinates();
    mapContacts();
  }

  void run() {
    const json& samples = at(doc_, "samples", "file");
    for (size_t k = 0; k < samples.size(); ++k) runSample(samples[k], static_cast<int>(k));
    if (!contactNote_.empty())
      for (const char* n : kContactQuantities) results_[n].skip(contactNote_);
  }

  /// The contact checks, each named after the algorithm that computes it: the library's
  /// Delassus propagation (PV-OSIMr, Sathya, Decre, Swevers 2024), constrainedABA and proxPV
  /// (Sathya & Carpentier 2024); the dense KKT solve stays as an independent oracle.
  static constexpr const char* kDelassus =
      "contact.delassus (delassusMatrix, PV-OSIMr propagation)";
  static constexpr const char* kDdqAba = "contact.ddq (constrainedAba, mu 1e-2)";
  static constexpr const char* kLambdaAba = "contact.lambda (constrainedAba, mu 1e-2)";
  static constexpr const char* kDdqPv = "contact.ddq (proxPv, mu 1e-4)";
  static constexpr const char* kLambdaPv = "contact.lambda (proxPv, mu 1e-4)";
  static constexpr const char* kDelassusKkt = "contact.delassus (oracle: dense J M^-1 J^T)";
  static constexpr const char* kDdqKkt = "contact.ddq (oracle: dense KKT solve)";
  static constexpr const char* kLambdaKkt = "contact.lambda (oracle: dense KKT solve)";
  static constexpr const char* kContactQuantities[] = {
      "contact.J", "contact.drift", kDelassus,    kDdqAba, kLambdaAba,
      kDdqPv,      kLambdaPv,       kDelassusKkt, kDdqKkt, kLambdaKkt};

 private:
  void mapCoordinates() {
    for (int i = 0; i < model_.nbodies; ++i)
      if (model_.joints[i].type == JointType::Floating) floatingBody_ = i;
    const json& m = at(doc_, "model", "file");
    if (m.contains("base_joint") && floatingBody_ >= 0 &&
        model_.jointNames[floatingBody_] != m["base_joint"].get<std::string>())
      throw VerifyError("the file's base joint '" + m["base_joint"].get<std::string>() +
                        "' is not the model's floating joint '" + model_.jointNames[floatingBody_] +
                        "'");
    coordinates_ = strings(at(doc_, "coordinates", "file"), "coordinates");
    if (static_cast<int>(coordinates_.size()) != model_.nv)
      throw VerifyError("the file has " + std::to_string(coordinates_.size()) +
                        " velocity coordinates, the model has nv = " + std::to_string(model_.nv));
    std::vector<bool> used(model_.nv, false);
    for (const auto& name : coordinates_) {
      int idx = -1;
      const int off = baseTokenOffset(name);
      if (off >= 0) {
        if (floatingBody_ < 0)
          throw VerifyError("coordinate '" + name + "' but the model has no floating joint");
        idx = model_.idx_v[floatingBody_] + off;
      } else {
        idx = model_.velocityIndex(name);
      }
      if (idx < 0) throw VerifyError("coordinate '" + name + "' is not in the model");
      if (used[idx]) throw VerifyError("coordinate '" + name + "' appears twice");
      used[idx] = true;
      vIndex_[name] = idx;
    }
  }

  void mapContacts() {
    if (!doc_.contains("contacts")) return;
    if (cmodel_->ny != model_.nv) {
      contactNote_ = "the model has kinematic loops (the Pinocchio files describe trees)";
      return;
    }
    set_ = std::make_unique<ConstraintSet>(*cmodel_);
    for (const auto& c : doc_["contacts"]) {
      const std::string link = text(at(c, "link", "contacts[]"), "contacts[].link");
      const std::string type = text(at(c, "type", "contacts[]"), "contacts[].type");
      const std::string where = "contact '" + link + "'";
      if (c.contains("reference_frame") && c["reference_frame"] != "LOCAL") {
        contactNote_ = where + ": reference frame " + c["reference_frame"].dump() +
                       " not supported (only LOCAL)";
        return;
      }
      if (c.contains("placement") &&
          !(c["placement"].is_string() &&
            c["placement"].get<std::string>().rfind("identity", 0) == 0)) {
        contactNote_ = where + ": only identity placements are supported";
        return;
      }
      if (type != "CONTACT_6D" && type != "CONTACT_3D") {
        contactNote_ = where + ": contact type " + type + " not supported";
        return;
      }
      const int frame = model_.frameId(link);
      if (frame < 0) throw VerifyError(where + ": no frame of that name in the model");
      // The library's constraint: frame A = the link frame (identity placement), LOCAL rows.
      const bool is6d = type == "CONTACT_6D";
      int ci = -1;
      try {
        ci = set_->addContact(link, is6d ? ConstraintType::Weld : ConstraintType::Point,
                              ReferenceFrame::Local, link);
      } catch (const ModelError& e) {
        throw VerifyError(where + ": " + e.what());
      }
      std::vector<std::string> rows;
      if (c.contains("rows")) {
        rows = strings(c["rows"], where + ".rows");
      } else {
        for (const char* s : {"x", "y", "z", "rx", "ry", "rz"})
          if (type == "CONTACT_6D" || s[0] != 'r') rows.push_back(link + ":" + s);
      }
      for (const auto& rn : rows) {
        const size_t colon = rn.rfind(':');
        const int row = colon == std::string::npos ? -1 : componentRow(rn.substr(colon + 1));
        if (row < 0 || (type == "CONTACT_3D" && row < 3))
          throw VerifyError(where + ": cannot interpret constraint row '" + rn + "'");
        rowIndex_[rn] = static_cast<int>(rows_.size());
        rows_.push_back({rn, frame, row, type == "CONTACT_3D"});
        // Weld rows: [angular; linear] like `row`; point rows: linear only.
        setRow_[rn] = set_->rowOffset(ci) + (is6d ? row : row - 3);
      }
    }
    cdata_ = std::make_unique<ClusterData>(*cmodel_);
    cd_ = std::make_unique<ConstraintData>(*cmodel_, *set_);
    const auto names = strings(at(doc_, "constraint_rows", "file"), "constraint_rows");
    if (names.size() != rows_.size())
      throw VerifyError("constraint_rows has " + std::to_string(names.size()) +
                        " names, the contacts define " + std::to_string(rows_.size()) + " rows");
    for (const auto& n : names)
      if (!rowIndex_.count(n)) throw VerifyError("constraint row '" + n + "' of no contact");
    constraintRows_ = names;
  }

  /// A velocity-space object {coordinate: value} in clusterdyn's v order.
  VecX toModel(const json& obj, const std::string& where) const {
    const NamedVector nv = namedVector(obj, where);
    if (static_cast<int>(nv.names.size()) != model_.nv)
      throw VerifyError(where + ": " + std::to_string(nv.names.size()) + " entries, expected " +
                        std::to_string(model_.nv));
    VecX out = VecX::Zero(model_.nv);
    for (size_t k = 0; k < nv.names.size(); ++k) {
      const auto it = vIndex_.find(nv.names[k]);
      if (it == vIndex_.end())
        throw VerifyError(where + ": unknown coordinate '" + nv.names[k] + "'");
      out[it->second] = nv.values[k];
    }
    return out;
  }

  /// Compares a result in clusterdyn's v order with a reference object by coordinate name.
  void compareVelocitySpace(const std::string& quantity, const VecX& ours, const json& ref,
                            int sample) {
    const NamedVector nv = namedVector(ref, quantity);
    Accumulator& acc = results_[quantity];
    for (size_t k = 0; k < nv.names.size(); ++k) {
      const auto it = vIndex_.find(nv.names[k]);
      if (it == vIndex_.end()) {
        acc.fail(sample, "unknown coordinate '" + nv.names[k] + "'");
        continue;
      }
      acc.add(ours[it->second], nv.values[k], sample, nv.names[k]);
    }
  }

  VecX configuration(const json& s, const std::string& where) const {
    VecX q = neutralConfiguration(model_);
    std::vector<bool> set(model_.nq, false);
    const NamedVector qn = namedVector(at(s, "q", where), where + ".q");
    for (size_t k = 0; k < qn.names.size(); ++k) {
      const int i = model_.positionIndex(qn.names[k]);
      const int iv = model_.velocityIndex(qn.names[k]);
      if (i < 0 || iv < 0 || model_.nqs[model_.velocityOwner[iv]] != 1)
        throw VerifyError(where + ".q: '" + qn.names[k] + "' is not a 1-dof joint of the model");
      q[i] = qn.values[k];
      set[i] = true;
    }
    if (floatingBody_ >= 0) {
      const std::string wb = where + ".base";
      const json& b = at(s, "base", where);
      const int iq = model_.idx_q[floatingBody_];
      q.segment<3>(iq) = numbers(at(b, "position", wb), 3, wb + ".position");
      Eigen::Quaterniond quat;
      if (b.contains("quaternion_xyzw")) {
        const VecX x = numbers(b["quaternion_xyzw"], 4, wb + ".quaternion_xyzw");
        quat = Eigen::Quaterniond(x[3], x[0], x[1], x[2]);
      } else if (b.contains("quaternion_wxyz")) {
        const VecX x = numbers(b["quaternion_wxyz"], 4, wb + ".quaternion_wxyz");
        quat = Eigen::Quaterniond(x[0], x[1], x[2], x[3]);
      } else {
        quat = Eigen::Quaterniond(Mat3(matrix(at(b, "rotation_matrix", wb), 3, 3, wb)));
      }
      q.segment<4>(iq + 3) = quat.coeffs();  // Eigen stores x, y, z, w: clusterdyn's layout
      for (int k = 0; k < 7; ++k) set[iq + k] = true;
    }
    for (int i = 0; i < model_.nq; ++i)
      if (!set[i]) throw VerifyError(where + ": no value for '" + model_.positionNames[i] + "'");
    return q;
  }

  void runSample(const json& s, int k) {
    const std::string where = "samples[" + std::to_string(k) + "]";
    const VecX q = configuration(s, where);
    const VecX v = toModel(at(s, "v", where), where + ".v");
    const VecX tau = toModel(at(s, "tau", where), where + ".tau");
    const Model& model = model_;
    Data& data = *data_;

    if (floatingBody_ >= 0 && s["base"].contains("rotation_matrix")) {
      Accumulator& acc = results_["base_pose"];
      const Status st = forwardKinematics(model, data, q);
      if (st != Status::Ok) {
        acc.fail(k, statusText(st, data));
      } else {
        const Mat3 R = matrix(s["base"]["rotation_matrix"], 3, 3, where + ".base.rotation_matrix");
        const Vec3 p = numbers(s["base"]["position"], 3, where + ".base.position");
        const Transform& oMb = data.oMi[floatingBody_];
        for (int r = 0; r < 3; ++r) {
          for (int c = 0; c < 3; ++c)
            acc.add(oMb.R(r, c), R(r, c), k,
                    "R(" + std::to_string(r) + "," + std::to_string(c) + ")");
          acc.add(oMb.p[r], p[r], k, "p(" + std::to_string(r) + ")");
        }
      }
    }
    if (s.contains("aba_ddq")) {
      const Status st = aba(model, data, q, v, tau);
      if (st != Status::Ok)
        results_["aba_ddq"].fail(k, statusText(st, data));
      else
        compareVelocitySpace("aba_ddq", data.ddq, s["aba_ddq"], k);
    }
    if (s.contains("rnea_tau")) {
      const VecX a = toModel(at(s, "rnea_a", where), where + ".rnea_a");
      const Status st = rnea(model, data, q, v, a);
      if (st != Status::Ok)
        results_["rnea_tau"].fail(k, statusText(st, data));
      else
        compareVelocitySpace("rnea_tau", data.tau, s["rnea_tau"], k);
    }
    // M and nle are also needed by the contact quantities.
    const Status stM = crba(model, data, q);
    const MatX M = data.M;
    const Status stN = nonLinearEffects(model, data, q, v);
    const VecX nle = data.nle;
    if (s.contains("M")) {
      Accumulator& acc = results_["M"];
      if (stM != Status::Ok) {
        acc.fail(k, statusText(stM, data));
      } else {
        const MatX Mref = matrix(s["M"], model.nv, model.nv, where + ".M");
        for (int r = 0; r < model.nv; ++r)
          for (int c = 0; c < model.nv; ++c)
            acc.add(M(vIndex_[coordinates_[r]], vIndex_[coordinates_[c]]), Mref(r, c), k,
                    coordinates_[r], &coordinates_[c]);
      }
    }
    if (s.contains("nle")) {
      if (stN != Status::Ok)
        results_["nle"].fail(k, statusText(stN, data));
      else
        compareVelocitySpace("nle", nle, s["nle"], k);
    }
    if (s.contains("contact") && !rows_.empty() && contactNote_.empty())
      runContacts(s["contact"], k, q, v, tau, M, nle, stM == Status::Ok && stN == Status::Ok);
  }

  void runContacts(const json& c, int k, const VecX& q, const VecX& v, const VecX& tau,
                   const MatX& M, const VecX& nle, bool dynamicsOk) {
    const std::string where = "samples[" + std::to_string(k) + "].contact";
    const Model& model = model_;
    Data& data = *data_;
    const int nc = static_cast<int>(rows_.size()), nv = model.nv;
    auto failAll = [&](const std::string& why) {
      for (const char* n : kContactQuantities) results_[n].fail(k, why);
    };
    // J (our rows in rows_ order, our column order) and drift = acceleration at ddq = 0.
    const Status st = forwardKinematics(model, data, q, v, VecX::Zero(nv));
    if (st != Status::Ok) return failAll("forwardKinematics: " + statusText(st, data));
    MatX J(nc, nv);
    VecX drift(nc);
    Mat6X Jf(6, nv);
    int lastFrame = -1;
    Motion aSpatial;
    Vec3 aClassical;
    for (int r = 0; r < nc; ++r) {
      const ContactRow& row = rows_[r];
      if (row.frame != lastFrame) {
        const Status sj = frameJacobian(model, data, row.frame, ReferenceFrame::Local, Jf);
        if (sj != Status::Ok) return failAll("frameJacobian: " + statusText(sj, data));
        aSpatial = frameAcceleration(model, data, row.frame, ReferenceFrame::Local);
        aClassical = frameClassicalAcceleration(model, data, row.frame, ReferenceFrame::Local);
        lastFrame = row.frame;
      }
      J.row(r) = Jf.row(row.row);
      drift[r] = row.classical ? aClassical[row.row - 3] : aSpatial[row.row];
    }
    if (c.contains("J")) {
      Accumulator& acc = results_["contact.J"];
      const MatX Jref = matrix(c["J"], nc, nv, where + ".J");
      for (int r = 0; r < nc; ++r) {
        const int ours = rowIndex_.at(constraintRows_[r]);
        for (int col = 0; col < nv; ++col)
          acc.add(J(ours, vIndex_[coordinates_[col]]), Jref(r, col), k, constraintRows_[r],
                  &coordinates_[col]);
      }
    }
    if (c.contains("drift")) {
      const NamedVector ref = namedVector(c["drift"], where + ".drift");
      NamedVector ours{constraintRows_, VecX(nc)};
      for (int r = 0; r < nc; ++r) ours.values[r] = drift[rowIndex_.at(constraintRows_[r])];
      compareNamed(results_["contact.drift"], ours, ref, k);
    }
    // The library's algorithms on the cluster tree (y = q for these tree models).
    const ClusterModel& cm = *cmodel_;
    ClusterData& cdata = *cdata_;
    ConstraintData& cd = *cd_;
    auto setIndex = [&](int r) { return setRow_.at(constraintRows_[r]); };
    if (c.contains("delassus")) {
      Accumulator& acc = results_[kDelassus];
      const Status st = delassusMatrix(cm, cdata, *set_, cd, q);
      if (st != Status::Ok) {
        acc.fail(k, "delassusMatrix: " + statusText(st, cdata.treeData));
      } else {
        const MatX Dref = matrix(c["delassus"], nc, nc, where + ".delassus");
        for (int r = 0; r < nc; ++r)
          for (int col = 0; col < nc; ++col)
            acc.add(cd.delassus(setIndex(r), setIndex(col)), Dref(r, col), k, constraintRows_[r],
                    &constraintRows_[col]);
      }
    }
    // Tolerance 1e-12 on the row accelerations, at most 100 iterations. proxPV's accuracy does
    // not depend on mu; constrainedABA's augmented-Lagrangian passes lose about eps/mu in the
    // unconstrained directions (docs/constraints.md): with mu 1e-4 lambda is only good to ~1e-8
    // relative on these robots, with 1e-2 to ~1e-10, so it runs with mu 1e-2.
    ProximalSettings settings;
    settings.tolerance = 1e-12;
    settings.maxIterations = 100;
    for (int alg = 0; alg < 2; ++alg) {
      settings.mu = alg == 0 ? 1e-2 : 1e-4;
      const char* ddqName = alg == 0 ? kDdqAba : kDdqPv;
      const char* lambdaName = alg == 0 ? kLambdaAba : kLambdaPv;
      const Status st = alg == 0 ? constrainedAba(cm, cdata, *set_, cd, q, v, tau, settings)
                                 : proxPv(cm, cdata, *set_, cd, q, v, tau, settings);
      if (st != Status::Ok) {
        const std::string why = std::string(alg == 0 ? "constrainedAba: " : "proxPv: ") +
                                statusText(st, cdata.treeData);
        if (c.contains("ddq")) results_[ddqName].fail(k, why);
        if (c.contains("lambda")) results_[lambdaName].fail(k, why);
        continue;
      }
      if (c.contains("ddq")) compareVelocitySpace(ddqName, cdata.qdd, c["ddq"], k);
      if (c.contains("lambda")) {
        const NamedVector ref = namedVector(c["lambda"], where + ".lambda");
        NamedVector ours{constraintRows_, VecX(nc)};
        for (int r = 0; r < nc; ++r) ours.values[r] = cd.lambda[setIndex(r)];
        compareNamed(results_[lambdaName], ours, ref, k);
      }
    }
    if (!dynamicsOk) {
      for (const char* n : {kDelassusKkt, kDdqKkt, kLambdaKkt})
        results_[n].fail(k, "crba / nonLinearEffects failed");
      return;
    }

    // Oracle (tools/support/dense_oracles.hpp): Delassus J M^-1 J^T and the KKT system from
    // the dense mass matrix.
    MatX D;
    if (!oracle::delassus(M, J, D)) {
      for (const char* n : {kDelassusKkt, kDdqKkt, kLambdaKkt})
        results_[n].fail(k, "the mass matrix is not positive definite");
      return;
    }
    if (c.contains("delassus")) {
      Accumulator& acc = results_[kDelassusKkt];
      const MatX Dref = matrix(c["delassus"], nc, nc, where + ".delassus");
      for (int r = 0; r < nc; ++r)
        for (int col = 0; col < nc; ++col)
          acc.add(D(rowIndex_.at(constraintRows_[r]), rowIndex_.at(constraintRows_[col])),
                  Dref(r, col), k, constraintRows_[r], &constraintRows_[col]);
    }
    // KKT: M ddq + nle = tau + J^T lambda, J ddq + drift = 0 (full-pivoting LU).
    const oracle::KktSolution kkt = oracle::solveKktLu(M, J, tau - nle, -drift);
    if (!kkt.ok) {
      for (const char* n : {kDdqKkt, kLambdaKkt}) results_[n].fail(k, "the KKT matrix is singular");
      return;
    }
    if (c.contains("ddq")) compareVelocitySpace(kDdqKkt, kkt.acceleration, c["ddq"], k);
    if (c.contains("lambda")) {
      const NamedVector ref = namedVector(c["lambda"], where + ".lambda");
      NamedVector ours{constraintRows_, VecX(nc)};
      for (int r = 0; r < nc; ++r) ours.values[r] = kkt.lambda[rowIndex_.at(constraintRows_[r])];
      compareNamed(results_[kLambdaKkt], ours, ref, k);
    }
  }

  const json& doc_;
  Results& results_;
  std::unique_ptr<ClusterModel> cmodel_;  ///< the URDF's cluster model (constraint algorithms)
  Model model_;                           ///< its spanning tree (tree quantities)
  std::unique_ptr<Data> data_;
  std::unique_ptr<ConstraintSet> set_;  ///< the file's contacts as library constraints
  std::unique_ptr<ClusterData> cdata_;
  std::unique_ptr<ConstraintData> cd_;
  std::map<std::string, int> setRow_;  ///< file row name -> row of set_
  int floatingBody_ = -1;
  std::vector<std::string> coordinates_;     ///< the file's velocity coordinates (its M order)
  std::map<std::string, int> vIndex_;        ///< coordinate name -> clusterdyn v index
  std::vector<ContactRow> rows_;             ///< our constraint rows (contacts' order)
  std::map<std::string, int> rowIndex_;      ///< row name -> index in rows_
  std::vector<std::string> constraintRows_;  ///< the file's row order
  std::string contactNote_;                  ///< non-empty: contacts not supported (skipped)
};

// ---------------------------------------------------------------------------------------------
// grbda files.

GrbdaFileInfo grbdaInfo(const json& doc, const std::string& urdfPath) {
  GrbdaFileInfo info;
  info.urdfPath = urdfPath;
  const json& m = at(doc, "model", "file");
  info.floatingBase = m.value("floating_base", false);
  info.baseJoint = m.value("base_joint", "");
  info.baseLink = m.value("base_link", "");
  if (doc.contains("gravity")) info.gravity = numbers(doc["gravity"], 3, "gravity");
  info.spanningJoints = strings(at(doc, "spanning_joints", "file"), "spanning_joints");
  info.spanningVelocityCoordinates =
      strings(at(doc, "spanning_velocity_coordinates", "file"), "spanning_velocity_coordinates");
  info.independentCoordinates =
      strings(at(doc, "independent_coordinates", "file"), "independent_coordinates");
  for (const auto& c : at(doc, "clusters", "file")) {
    GrbdaCluster g;
    g.name = text(at(c, "name", "clusters[]"), "clusters[].name");
    g.parent = c.value("parent_cluster", -1);
    g.jointType = c.value("grbda_cluster_joint_type", "");
    g.links = strings(at(c, "links", g.name), g.name + ".links");
    g.spanningJoints = strings(at(c, "spanning_joints", g.name), g.name + ".spanning_joints");
    g.independentJoints =
        strings(at(c, "independent_joints", g.name), g.name + ".independent_joints");
    if (c.contains("G_constant"))
      g.Gconstant = NamedMatrix{g.spanningJoints, g.independentJoints,
                                matrix(c["G_constant"], g.spanningJoints.size(),
                                       g.independentJoints.size(), g.name + ".G_constant")};
    info.clusters.push_back(std::move(g));
  }
  return info;
}

GrbdaSample grbdaSample(const json& s, int k, const GrbdaFileInfo& info) {
  const std::string where = "samples[" + std::to_string(k) + "]";
  GrbdaSample out;
  out.index = k;
  out.q = namedVector(at(s, "q", where), where + ".q");
  out.qd = namedVector(at(s, "qd", where), where + ".qd");
  out.tau = namedVector(at(s, "tau", where), where + ".tau");
  out.ydd = namedVector(at(s, "ydd", where), where + ".ydd");
  if (info.floatingBase) {
    const json& b = at(s, "base", where);
    out.hasBase = true;
    out.basePosition = numbers(at(b, "position", where + ".base"), 3, where + ".base.position");
    if (b.contains("quaternion_wxyz")) {
      const VecX x = numbers(b["quaternion_wxyz"], 4, where + ".base.quaternion_wxyz");
      out.baseOrientation = Eigen::Quaterniond(x[0], x[1], x[2], x[3]);
    } else if (b.contains("quaternion_xyzw")) {
      const VecX x = numbers(b["quaternion_xyzw"], 4, where + ".base.quaternion_xyzw");
      out.baseOrientation = Eigen::Quaterniond(x[3], x[0], x[1], x[2]);
    } else {
      out.baseOrientation =
          Eigen::Quaterniond(Mat3(matrix(at(b, "rotation_matrix", where), 3, 3, where)));
    }
  }
  return out;
}

/// Compares the clustering: every reference cluster must have a computed cluster with the same
/// set of links, the same spanning and independent joints and the same parent cluster.
void compareClusters(Accumulator& acc, const std::vector<GrbdaCluster>& ours,
                     const std::vector<GrbdaCluster>& ref) {
  using Set = std::set<std::string>;
  auto set = [](const std::vector<std::string>& v) { return Set(v.begin(), v.end()); };
  auto find = [&](const Set& links) {
    for (size_t i = 0; i < ours.size(); ++i)
      if (set(ours[i].links) == links) return static_cast<int>(i);
    return -1;
  };
  int mismatches = 0;
  for (const auto& c : ref) {
    const int i = find(set(c.links));
    std::string why;
    if (i < 0) {
      why = "no computed cluster with the links of " + c.name;
    } else if (set(ours[i].spanningJoints) != set(c.spanningJoints) ||
               set(ours[i].independentJoints) != set(c.independentJoints)) {
      why = c.name + ": different spanning/independent joints";
    } else {
      const int pr = c.parent, po = ours[i].parent;
      const bool same = pr < 0 ? po < 0 : po >= 0 && set(ours[po].links) == set(ref[pr].links);
      if (!same) why = c.name + ": different parent cluster";
    }
    if (!why.empty()) {
      ++mismatches;
      acc.fail(0, why);
    }
  }
  if (ours.size() != ref.size())
    acc.fail(0, std::to_string(ours.size()) + " clusters computed, " + std::to_string(ref.size()) +
                    " in the reference");
  acc.add(mismatches, 0.0, 0, "clusters not matching (of " + std::to_string(ref.size()) + ")");
}

void runGrbda(GrbdaContext& ctx, const json& samples, const std::vector<std::string>& names,
              bool hasG, bool hasImplicit, Results& results);

void verifyGrbda(const json& doc, const std::string& urdfPath, Results& results, int& nsamples) {
  GrbdaContext ctx;
  ctx.info = grbdaInfo(doc, urdfPath);
  if (!fs::exists(urdfPath)) throw VerifyError("model file not found: " + urdfPath);

  // Quantities present in the file, in a fixed order.
  const json& samples = at(doc, "samples", "file");
  bool hasG = false, hasImplicit = false;
  for (const auto& c : ctx.info.clusters) hasG = hasG || c.Gconstant.has_value();
  for (const auto& s : samples) hasImplicit = hasImplicit || s.contains("implicit_cluster_G_g");
  std::vector<std::string> names = {"ydd", "qdd", "tau_id", "H", "C", "clusters"};
  if (hasG) names.push_back("explicit_G");
  if (hasImplicit) names.push_back("implicit_G_g");
  for (const auto& n : names) results[n];

  nsamples = static_cast<int>(samples.size());
  try {
    runGrbda(ctx, samples, names, hasG, hasImplicit, results);
  } catch (...) {
    for (const auto& n : names) results[n].skip("not computed: see the error below");
    throw;
  }
}

void runGrbda(GrbdaContext& ctx, const json& samples, const std::vector<std::string>& names,
              bool hasG, bool hasImplicit, Results& results) {
  const int nsamples = static_cast<int>(samples.size());
  std::string why;
  const bool ready = prepareGrbda(ctx, why);
  for (int k = 0; k < nsamples; ++k) {
    const json& s = samples[k];
    const GrbdaSample in = grbdaSample(s, k, ctx.info);  // parsed even when not computed
    if (!ready) continue;
    GrbdaSampleResult out;
    std::string whyS;
    if (!computeGrbdaSample(ctx, in, out, whyS)) {
      for (const auto& n : {"ydd", "qdd", "tau_id", "H", "C", "implicit_G_g"})
        if (n != std::string("implicit_G_g") || hasImplicit) results[n].fail(k, whyS);
      continue;
    }
    for (const auto& f : out.failures)
      if (std::find(names.begin(), names.end(), f.first) != names.end())
        results[f.first].fail(k, f.second);
    const std::string where = "samples[" + std::to_string(k) + "]";
    auto vec = [&](const char* key, const std::optional<NamedVector>& ours) {
      if (ours && s.contains(key))
        compareNamed(results[key], *ours, namedVector(s[key], where + "." + key), k);
    };
    vec("ydd", out.ydd);
    vec("qdd", out.qdd);
    vec("tau_id", out.tauId);
    vec("C", out.C);
    if (out.H && s.contains("H")) {
      const auto& ic = ctx.info.independentCoordinates;
      const NamedMatrix ref{ic, ic, matrix(s["H"], ic.size(), ic.size(), where + ".H")};
      compareNamed(results["H"], *out.H, ref, k);
    }
    if (s.contains("implicit_cluster_G_g")) {
      Accumulator& acc = results["implicit_G_g"];
      for (auto it = s["implicit_cluster_G_g"].begin(); it != s["implicit_cluster_G_g"].end();
           ++it) {
        const auto found = std::find_if(ctx.info.clusters.begin(), ctx.info.clusters.end(),
                                        [&](const GrbdaCluster& c) { return c.name == it.key(); });
        if (found == ctx.info.clusters.end())
          throw VerifyError(where + ".implicit_cluster_G_g: unknown cluster " + it.key());
        const auto mine = out.implicitGg.find(it.key());
        if (mine == out.implicitGg.end()) {
          acc.fail(k, "no G/g computed for cluster " + it.key());
          continue;
        }
        const std::string w = where + ".implicit_cluster_G_g." + it.key();
        const NamedMatrix G{found->spanningJoints, found->independentJoints,
                            matrix(at(it.value(), "G", w), found->spanningJoints.size(),
                                   found->independentJoints.size(), w + ".G")};
        const NamedVector g{found->spanningJoints,
                            numbers(at(it.value(), "g", w), found->spanningJoints.size(), w)};
        compareNamed(acc, mine->second.first, G, k);
        compareNamed(acc, mine->second.second, g, k);
      }
    }
  }
  if (ready && ctx.clusters) {
    compareClusters(results["clusters"], *ctx.clusters, ctx.info.clusters);
    if (hasG) {
      for (const auto& c : ctx.info.clusters) {
        if (!c.Gconstant) continue;
        const auto it = std::find_if(ctx.clusters->begin(), ctx.clusters->end(),
                                     [&](const GrbdaCluster& o) { return o.name == c.name; });
        if (it == ctx.clusters->end() || !it->Gconstant)
          results["explicit_G"].fail(0, "no constant G computed for " + c.name);
        else
          compareNamed(results["explicit_G"], *it->Gconstant, *c.Gconstant, 0);
      }
    }
  }
  const std::string note =
      ready ? "no reference values" : "not computed" + (why.empty() ? "" : ": " + why);
  for (const auto& n : names) results[n].skip(note);
}

/// base/urdf; if that file does not exist, base/<urdf without its leading folders> (so that
/// --models may also name the urdfplus/ folder itself). Absolute urdf paths are kept.
std::string resolveModel(const fs::path& base, const std::string& urdf) {
  const fs::path rel(urdf);
  if (rel.is_absolute()) return urdf;
  const std::string first = (base / rel).lexically_normal().string();
  if (fs::exists(first)) return first;
  std::vector<fs::path> parts(rel.begin(), rel.end());
  for (size_t skip = 1; skip < parts.size(); ++skip) {
    fs::path p = base;
    for (size_t k = skip; k < parts.size(); ++k) p /= parts[k];
    if (fs::exists(p)) return p.lexically_normal().string();
  }
  return first;
}

std::string fmtErr(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", x);
  return buf;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// grbda files: the cluster-tree algorithms.

namespace {

std::string statusText(Status s, const ClusterData& data) {
  return std::string(statusName(s)) + ": " + data.errorMessage();
}

/// Reference name of spanning velocity coordinate i: the floating joint's coordinates become the
/// base tokens "base:wx" ... "base:vz" (same meaning: body-frame [w; v]), 1-dof joints keep
/// their joint name.
std::string referenceVelocityName(const Model& t, int i, int floatingBody) {
  const std::string& name = t.velocityNames[i];  // "<joint>:wx" ... for the floating joint
  if (t.velocityOwner[i] != floatingBody) return name;
  const size_t colon = name.rfind(':');
  return "base:" + (colon == std::string::npos ? name : name.substr(colon + 1));
}

std::map<std::string, int> indexByName(const std::vector<std::string>& names) {
  std::map<std::string, int> out;
  for (size_t k = 0; k < names.size(); ++k) out[names[k]] = static_cast<int>(k);
  return out;
}

/// Fills x (size names.size()) from a named vector; every name must be present.
bool fromNamed(const NamedVector& in, const std::vector<std::string>& names, VecX& x,
               const char* what, std::string& why) {
  const std::map<std::string, int> index = indexByName(in.names);
  x.resize(names.size());
  for (size_t k = 0; k < names.size(); ++k) {
    const auto it = index.find(names[k]);
    if (it == index.end()) {
      why = std::string("the sample's ") + what + " has no value for '" + names[k] + "'";
      return false;
    }
    x[k] = in.values[it->second];
  }
  if (in.names.size() != names.size()) {
    why = std::string("the sample's ") + what + " has " + std::to_string(in.names.size()) +
          " entries, the model " + std::to_string(names.size());
    return false;
  }
  return true;
}

}  // namespace

bool prepareGrbda(GrbdaContext& ctx, std::string& why) {
  (void)why;  // every problem below is a model error or a mismatch with the file (throws)
  const GrbdaFileInfo& info = ctx.info;
  ModelOptions options;
  options.gravity = info.gravity;  // floating models carry their own type="floating" joint
  ctx.model = std::make_unique<ClusterModel>(loadModel(info.urdfPath, options));
  const ClusterModel& cm = *ctx.model;
  const Model& t = cm.treeModel;
  ctx.data = std::make_unique<ClusterData>(cm);

  ctx.floatingBody = -1;
  for (int i = 0; i < t.nbodies; ++i)
    if (t.joints[i].type == JointType::Floating) ctx.floatingBody = i;
  if (info.floatingBase != (ctx.floatingBody >= 0))
    throw VerifyError(std::string("the file's model is ") +
                      (info.floatingBase ? "floating-base" : "fixed-base") + ", " + info.urdfPath +
                      " is not");
  if (ctx.floatingBody >= 0 && !info.baseJoint.empty() &&
      t.jointNames[ctx.floatingBody] != info.baseJoint)
    throw VerifyError("the file's base joint '" + info.baseJoint + "' is not the model's '" +
                      t.jointNames[ctx.floatingBody] + "'");
  for (int i = 0; i < t.nbodies; ++i)
    if (i != ctx.floatingBody && t.nvs[i] != 1)
      throw VerifyError("joint '" + t.jointNames[i] + "' is not a 1-dof joint");

  ctx.spanningVelocityNames.resize(t.nv);
  for (int i = 0; i < t.nv; ++i)
    ctx.spanningVelocityNames[i] = referenceVelocityName(t, i, ctx.floatingBody);
  ctx.independentNames.resize(cm.ny);
  for (int k = 0; k < cm.ny; ++k)
    ctx.independentNames[k] = ctx.spanningVelocityNames[cm.independentVelocity[k]];

  // Both coordinate sets must be the file's (as sets: the orders differ).
  auto sameSet = [](std::vector<std::string> a, std::vector<std::string> b, const char* what) {
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a == b) return;
    std::vector<std::string> onlyModel, onlyFile;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(onlyModel));
    std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(onlyFile));
    throw VerifyError(std::string(what) + " differ: " + std::to_string(a.size()) +
                      " in the model, " + std::to_string(b.size()) + " in the file" +
                      (onlyModel.empty() ? "" : "; model only: '" + onlyModel[0] + "'") +
                      (onlyFile.empty() ? "" : "; file only: '" + onlyFile[0] + "'"));
  };
  sameSet(ctx.spanningVelocityNames, info.spanningVelocityCoordinates,
          "spanning velocity coordinates");
  sameSet(ctx.independentNames, info.independentCoordinates, "independent coordinates");

  // The clustering in the reference's terms; clusters are named after the reference cluster
  // with the same link set (explicit_G and implicit_G_g are matched by that name).
  using Set = std::set<std::string>;
  std::vector<GrbdaCluster> ours;
  ctx.clusterIndex.clear();
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    GrbdaCluster g;
    g.name = c.name;
    g.parent = c.parent;
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) g.links.push_back(t.bodyNames[b]);
    for (int i = c.v0; i < c.v0 + c.nv; ++i)
      g.spanningJoints.push_back(ctx.spanningVelocityNames[i]);
    for (int j = c.y0; j < c.y0 + c.ny; ++j) g.independentJoints.push_back(ctx.independentNames[j]);
    g.jointType = c.constrained()                   ? "Generic"
                  : c.firstBody == ctx.floatingBody ? "Free"
                                                    : "Revolute";
    if (c.constrained() && !c.implicit())
      g.Gconstant = NamedMatrix{g.spanningJoints, g.independentJoints, c.G};
    const Set links(g.links.begin(), g.links.end());
    for (const GrbdaCluster& r : info.clusters)
      if (Set(r.links.begin(), r.links.end()) == links) {
        g.name = r.name;
        ctx.clusterIndex[r.name] = k;
      }
    ours.push_back(std::move(g));
  }
  ctx.clusters = std::move(ours);
  ctx.ready = true;
  return true;
}

bool computeGrbdaSample(GrbdaContext& ctx, const GrbdaSample& sample, GrbdaSampleResult& out,
                        std::string& why) {
  if (!ctx.ready) {
    why = "the cluster model is not loaded";
    return false;
  }
  const ClusterModel& cm = *ctx.model;
  const Model& t = cm.treeModel;
  ClusterData& data = *ctx.data;

  // Spanning state: joint angles by name, the base pose from the sample's base object.
  VecX q = neutralConfiguration(t);
  std::vector<bool> set(t.nq, false);
  for (size_t k = 0; k < sample.q.names.size(); ++k) {
    const int b = t.jointId(sample.q.names[k]);
    if (b < 0 || b == ctx.floatingBody) {
      why = "the sample's q names an unknown joint '" + sample.q.names[k] + "'";
      return false;
    }
    q[t.idx_q[b]] = sample.q.values[k];
    set[t.idx_q[b]] = true;
  }
  if (ctx.floatingBody >= 0) {
    if (!sample.hasBase) {
      why = "the sample has no base pose";
      return false;
    }
    const int iq = t.idx_q[ctx.floatingBody];
    q.segment<3>(iq) = sample.basePosition;
    q.segment<4>(iq + 3) = sample.baseOrientation.coeffs();  // x, y, z, w: clusterdyn's layout
    for (int k = 0; k < 7; ++k) set[iq + k] = true;
  }
  for (int i = 0; i < t.nq; ++i)
    if (!set[i]) {
      why = "the sample's q has no value for '" + t.positionNames[i] + "'";
      return false;
    }
  VecX v, tauY, yddIn;
  if (!fromNamed(sample.qd, ctx.spanningVelocityNames, v, "qd", why) ||
      !fromNamed(sample.tau, ctx.independentNames, tauY, "tau", why) ||
      !fromNamed(sample.ydd, ctx.independentNames, yddIn, "ydd", why))
    return false;

  const std::vector<std::string>& yn = ctx.independentNames;
  Status st = ceAba(cm, data, q, v, tauY);
  if (st == Status::Ok) {
    out.ydd = NamedVector{yn, data.ydd};
    out.qdd = NamedVector{ctx.spanningVelocityNames, data.qdd};
  } else {
    out.failures["ydd"] = out.failures["qdd"] = "ceAba: " + statusText(st, data);
  }
  st = ceRnea(cm, data, q, v, yddIn);
  if (st == Status::Ok)
    out.tauId = NamedVector{yn, data.tauY};
  else
    out.failures["tau_id"] = "ceRnea: " + statusText(st, data);
  st = clusterMassMatrix(cm, data, q);
  if (st == Status::Ok)
    out.H = NamedMatrix{yn, yn, data.H};
  else
    out.failures["H"] = "clusterMassMatrix: " + statusText(st, data);
  st = clusterBias(cm, data, q, v);
  if (st == Status::Ok)
    out.C = NamedVector{yn, data.C};
  else
    out.failures["C"] = "clusterBias: " + statusText(st, data);

  bool anyImplicit = false;
  for (const Cluster& c : cm.clusters) anyImplicit = anyImplicit || c.implicit();
  if (anyImplicit) {
    st = clusterConstraintMatrices(cm, data, q, v);
    if (st != Status::Ok) {
      out.failures["implicit_G_g"] = "clusterConstraintMatrices: " + statusText(st, data);
    } else {
      for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
        const Cluster& c = cm.clusters[k];
        if (!c.implicit()) continue;
        const GrbdaCluster& g = (*ctx.clusters)[k];
        out.implicitGg[g.name] = {
            NamedMatrix{g.spanningJoints, g.independentJoints, data.explicitMatrix(k)},
            NamedVector{g.spanningJoints, data.explicitBias(k)}};
      }
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------

FileReport verifyReferenceFile(const std::string& jsonPath, const VerifyOptions& options) {
  FileReport report;
  report.path = jsonPath;
  report.tolerance = options.tolerance;
  Results results;
  try {
    std::ifstream in(jsonPath);
    if (!in) throw VerifyError("cannot read file");
    json doc;
    try {
      doc = json::parse(in);
    } catch (const json::exception& e) {
      throw VerifyError(std::string("invalid JSON: ") + e.what());
    }
    report.format = doc.value("format", "");
    const json& model = at(doc, "model", "file");
    const std::string urdf = text(at(model, "urdf", "model"), "model.urdf");
    const fs::path base = options.modelsDir.empty()
                              ? fs::absolute(jsonPath).parent_path().parent_path()
                              : fs::path(options.modelsDir);
    report.modelPath = resolveModel(base, urdf);
    if (doc.contains("independent_coordinates")) {
      report.kind = "grbda";
      verifyGrbda(doc, report.modelPath, results, report.samples);
    } else if (doc.contains("coordinates")) {
      report.kind = "pinocchio";
      report.samples = static_cast<int>(at(doc, "samples", "file").size());
      PinocchioVerifier(doc, report.modelPath, results).run();
    } else {
      throw VerifyError(
          "unknown file kind: neither \"coordinates\" (Pinocchio) nor \"independent_coordinates\" "
          "(grbda) at the top level");
    }
  } catch (const VerifyError& e) {
    report.error = e.what();
  } catch (const ModelError& e) {
    report.error = std::string("model: ") + e.what();
  } catch (const std::exception& e) {
    report.error = e.what();
  }
  report.quantities = results.finish(options.tolerance);
  return report;
}

std::string formatReport(const FileReport& r) {
  std::ostringstream os;
  os << r.path << "\n";
  os << "  " << (r.kind.empty() ? "?" : r.kind) << " file, model " << r.modelPath << ", "
     << r.samples << " samples, tolerance " << r.tolerance << " on max |a - b| / max(1, |b|)\n";
  if (!r.quantities.empty()) {
    char line[1024];
    int width = 18;  // the quantity column fits the longest name (they name the algorithm)
    for (const auto& q : r.quantities) width = std::max(width, static_cast<int>(q.name.size()));
    std::snprintf(line, sizeof line, "  %-*s %-12s %-12s %-8s %-8s %s\n", width, "quantity",
                  "max rel err", "max abs err", "samples", "status", "worst entry / note");
    os << line;
    for (const auto& q : r.quantities) {
      const bool computed = q.entries > 0;
      std::string detail = q.outcome == Outcome::Skipped ? "(" + q.note + ")" : q.worst;
      if (q.outcome == Outcome::Failed && !q.note.empty()) detail += "; " + q.note;
      std::snprintf(line, sizeof line, "  %-*s %-12s %-12s %-8d %-8s %s\n", width, q.name.c_str(),
                    computed ? fmtErr(q.maxRelError).c_str() : "-",
                    computed ? fmtErr(q.maxAbsError).c_str() : "-", q.samples,
                    outcomeName(q.outcome), detail.c_str());
      os << line;
    }
  }
  if (!r.error.empty()) os << "  error: " << r.error << "\n";
  return os.str();
}

}  // namespace clusterdyn::verify
