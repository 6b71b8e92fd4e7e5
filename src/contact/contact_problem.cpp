// Contact problems on a cluster model: the rows (bilateral constraints, point contacts), the
// workspace, and the constraint-space problem of one step (Delassus matrix of the cluster tree
// in contact frames, free velocity, position feedback).
#include <cmath>
#include <type_traits>

#include "cluster/cluster_workspace.hpp"
#include "constrained/constraint_detail.hpp"
#include "constrained/delassus_aba.hpp"
#include "contact/contact_detail.hpp"
#include "core/check.hpp"

namespace clusterdyn {

ContactProblem::ContactProblem(const ClusterModel& model, const ConstraintSet* bilateral)
    : set_(model) {
  if (bilateral) {
    if (&bilateral->model() != &model)
      throw ModelError("ContactProblem: the bilateral constraint set belongs to another model");
    for (const RigidConstraint& c : bilateral->constraints()) set_.add(c);
  }
  nBilateral_ = set_.size();
  bilateralRows_ = set_.rows();
}

int ContactProblem::addPointContact(const std::string& name, int body, const Vec3& point,
                                    ConeType cone) {
  if (!point.allFinite()) throw ModelError("contact '" + name + "': the point is not finite");
  if (cone != ConeType::Coulomb && !detail::isPatchCone(cone))
    throw ModelError("contact '" + name + "': the cone must be Coulomb, Torsional or Rolling");
  RigidConstraint c;
  c.name = name;
  // A patch contact: the body's angular velocity and the point's velocity (world-aligned).
  c.type = cone == ConeType::Coulomb ? ConstraintType::Point : ConstraintType::Weld;
  c.body1 = body;
  c.placement1 = Transform(Mat3::Identity(), point);
  c.body2 = -1;
  c.frame = ReferenceFrame::LocalWorldAligned;  // rows: world velocity of the point
  set_.add(c);                                  // checks the body and the name
  PointContact pc;
  pc.name = name;
  pc.body = body;
  pc.point = point;
  pc.cone = cone;
  contacts_.push_back(pc);
  return static_cast<int>(contacts_.size()) - 1;
}

int ContactProblem::addGroundFoot(const std::string& name, int body, const Vec3& centre,
                                  double radius, double mu, double muTorsion, double muRolling) {
  if (!(radius >= 0.0) || !std::isfinite(radius))
    throw ModelError("foot '" + name + "': radius must be >= 0 and finite");
  if (!(mu >= 0.0) || !std::isfinite(mu))
    throw ModelError("foot '" + name + "': mu must be >= 0 and finite");
  if (!(muTorsion >= 0.0) || !std::isfinite(muTorsion) || !(muRolling >= 0.0) ||
      !std::isfinite(muRolling))
    throw ModelError("foot '" + name + "': muTorsion and muRolling must be >= 0 and finite");
  const ConeType cone = muRolling > 0.0   ? ConeType::Rolling
                        : muTorsion > 0.0 ? ConeType::Torsional
                                          : ConeType::Coulomb;
  const int i = addPointContact(name, body, centre, cone);
  contacts_[i].source = ContactSource::Ground;
  contacts_[i].radius = radius;
  contacts_[i].mu = mu;
  contacts_[i].muTorsion = muTorsion;
  contacts_[i].muRolling = muRolling;
  return i;
}

void ContactProblem::setGround(const Vec3& normal, double offset) {
  const double n = normal.norm();
  if (!(n > 0.0) || !std::isfinite(n) || !std::isfinite(offset))
    throw ModelError("setGround: the normal must be non-zero and finite, the offset finite");
  ground_.normal = normal / n;
  ground_.offset = offset;
}

ContactData::ContactData(const ClusterModel& model, const ContactProblem& p)
    : problem(&p), rows(model, p.rows()) {
  const int nc = static_cast<int>(p.contacts().size()), m = p.rows().rows();
  normal.assign(nc, Vec3::UnitZ());
  gap.setZero(nc);
  mu.setZero(nc);
  muTorsion.setZero(nc);
  muRolling.setZero(nc);
  frame.assign(nc, Mat3::Identity());
  const int nb = p.bilateralCount();
  for (int i = 0; i < p.rows().size(); ++i) {
    ConeBlock b;
    b.row0 = p.rows().rowOffset(i);
    b.rows = p.rows().constraints()[i].rows();
    b.type = i < nb ? ConeType::Bilateral : p.contacts()[i - nb].cone;
    if (b.type == ConeType::Torsional) {  // its rolling rows: no torque
      ConeBlock roll = b;
      roll.type = ConeType::Inactive;
      roll.rows = 2;
      blocks.push_back(roll);
      b.row0 += 2;
      b.rows = 4;
    }
    if (i >= nb) contactBlock.push_back(static_cast<int>(blocks.size()));
    blocks.push_back(b);
  }
  G.setZero(m, m);
  g.setZero(m);
  lambda.setZero(m);
  lambdaRows.setZero(m);
  velocity.setZero(m);
  solver.resize(m);
  y.setZero(model.nyq);
  ydot.setZero(model.ny);
  ydotFree.setZero(model.ny);
  yddFree.setZero(model.ny);
  tauTotal.setZero(model.ny);
  qNext.setZero(model.treeModel.nq);
  vSpan.setZero(model.treeModel.nv);
  Jc.setZero(m, model.ny);
}

namespace {

/// Contact frame [t1 t2 n] from the unit normal n (t1 orthogonal to n and to the world axis
/// least aligned with it).
Mat3 contactFrame(const Vec3& n) {
  int k = 0;
  n.cwiseAbs().minCoeff(&k);
  const Vec3 t1 = n.cross(Vec3::Unit(k)).normalized();
  Mat3 R;
  R.col(0) = t1;
  R.col(1) = n.cross(t1);
  R.col(2) = n;
  return R;
}

/// The map T of contact i's rows from world-aligned to its frame, applied to x (the contact's
/// rows of one column of Jc or G, or of one row of G, transposed): a point contact R^T x; a patch
/// contact's 6 rows (w; v at the point) T (R^T w; R^T v), a ground sphere's linear rows moved
/// from the centre to the touching point p - radius n, v' = v + w x (-radius n) = v + radius
/// (-w_t2, w_t1, 0).
struct FrameMap {
  const Mat3& R;
  bool patch;  ///< x has 6 rows (else 3)
  double rad;
  template <typename X>
  void operator()(X&& x) const {
    x.template head<3>() = R.transpose() * x.template head<3>();
    if constexpr (std::decay_t<X>::RowsAtCompileTime == 6) {
      x.template tail<3>() = R.transpose() * x.template tail<3>();
      x[3] -= rad * x[1];
      x[4] += rad * x[0];
    }
  }
};

FrameMap frameMap(const ContactProblem& problem, const ContactData& cd, int i) {
  const PointContact& c = problem.contacts()[i];
  return {cd.frame[i], c.cone != ConeType::Coulomb,
          c.source == ContactSource::Ground ? c.radius : 0.0};
}

/// The N rows E (covectors on body b's motion, body coordinates) times b's Jacobian in
/// independent coordinates: column(j, E J_j) for each coordinate j of the clusters that support b
/// (the other columns are zero). E is moved to each supporting body as a force (actForce, the
/// adjoint of the motion transforms bodyJacobian applies to the columns): e . (X s) = (X^T e) . s,
/// so each column is E S_j there (a floating joint, S = I: E itself). E is overwritten.
template <int N, typename F>
void rowsTimesBodyJacobian(const ClusterModel& cm, const ClusterData& data, int b,
                           Eigen::Matrix<double, N, 6, Eigen::RowMajor>& E, F&& column) {
  using Col = Eigen::Matrix<double, N, 1>;
  const Model& tree = cm.treeModel;
  const Data& td = data.treeData;
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  const auto move = [&E](const Transform& X) {
    for (int r = 0; r < N; ++r) E.row(r) = X.actForce(E.row(r).transpose()).transpose();
  };
  int cur = b;
  while (cur >= 0) {
    const int k = cm.bodyCluster[cur];
    const Cluster& c = cm.clusters[k];
    if (!c.constrained()) {
      const Joint& joint = tree.joints[cur];
      if (joint.type == JointType::Floating) {
        for (int j = 0; j < 6; ++j) column(c.y0 + j, Col(E.col(j)));
      } else {
        for (int j = 0; j < joint.nv; ++j) column(c.y0 + j, Col(E * joint.S.col(j)));
      }
      cur = tree.parent[cur];
      if (cur >= 0) move(td.liMi[c.firstBody]);
    } else {
      const ClusterWorkspace& w = ws[k];
      const int l = cur - c.firstBody;
      for (int j = 0; j < c.ny; ++j) column(c.y0 + j, Col(E * w.S.block<6, 1>(6 * l, j)));
      cur = c.outputBody;
      if (cur >= 0) move(w.outputTb[l]);
    }
  }
}

/// cd.Jc, the row Jacobian with each contact's rows in its frame (FrameMap). Contacts only: each
/// contact's rows in its frame, E = T C (C: its attachment's world-aligned rows), times the body
/// Jacobian of its body (rowsTimesBodyJacobian, on the poses and motion subspaces the Delassus
/// matrix read: no second velocity pass); the other columns are zero. With bilateral rows:
/// constraintJacobian's rows, the contacts' turned.
void contactJacobian(const ClusterModel& model, const ClusterData& data,
                     const ContactProblem& problem, ContactData& cd) {
  const ConstraintSet& set = problem.rows();
  const int nb = problem.bilateralCount();
  const int nc = static_cast<int>(problem.contacts().size());
  if (problem.bilateralRows() > 0) {
    cd.Jc = cd.rows.jacobian;
    for (int i = 0; i < nc; ++i) {
      const FrameMap turn = frameMap(problem, cd, i);
      const int r = set.rowOffset(nb + i);
      for (int j = 0; j < model.ny; ++j)
        if (turn.patch)
          turn(cd.Jc.block<6, 1>(r, j));
        else
          turn(cd.Jc.block<3, 1>(r, j));
    }
    return;
  }
  cd.Jc.setZero();
  for (int i = 0; i < nc; ++i) {
    const ConstraintData::Attachment& a = cd.rows.attachments[i];  // contact i's, on the world
    const FrameMap turn = frameMap(problem, cd, i);
    if (turn.patch) {
      Eigen::Matrix<double, 6, 6, Eigen::RowMajor> E = a.C;
      for (int k = 0; k < 6; ++k) turn(E.col(k));
      rowsTimesBodyJacobian<6>(model, data, a.body, E,
                               [&](int j, const Vec6& x) { cd.Jc.block<6, 1>(a.row0, j) = x; });
    } else {
      Eigen::Matrix<double, 3, 6, Eigen::RowMajor> E;
      E.noalias() = turn.R.transpose() * a.C.topRows<3>();
      rowsTimesBodyJacobian<3>(model, data, a.body, E,
                               [&](int j, const Vec3& x) { cd.Jc.block<3, 1>(a.row0, j) = x; });
    }
  }
}

/// cd.G = T D T^T, D = cd.rows.delassus, T the contacts' FrameMaps, exactly symmetric: the maps
/// from the left on the blocks on and above the diagonal (rows of contact i, the columns from its
/// first on), then from the right (columns of contact i, the rows up to its last); the diagonal
/// blocks averaged with their transposes, the upper triangle mirrored (D's strictly lower
/// triangle outside the contacts' diagonal blocks is not read: D is symmetric up to rounding,
/// exactly so from the propagation without compressions, where T D T^T is then the same as
/// turning all of D).
void framedDelassus(const ContactProblem& problem, ContactData& cd) {
  const MatX& D = cd.rows.delassus;
  const ConstraintSet& set = problem.rows();
  const int nb = problem.bilateralCount();
  const int nc = static_cast<int>(problem.contacts().size());
  const int m = static_cast<int>(D.rows());
  cd.G = D;
  for (int i = 0; i < nc; ++i) {
    const FrameMap turn = frameMap(problem, cd, i);
    const int r = set.rowOffset(nb + i);
    for (int j = r; j < m; ++j)
      if (turn.patch)
        turn(cd.G.block<6, 1>(r, j));
      else
        turn(cd.G.block<3, 1>(r, j));
  }
  for (int i = 0; i < nc; ++i) {
    const FrameMap turn = frameMap(problem, cd, i);
    const int r = set.rowOffset(nb + i), n = problem.contacts()[i].rows();
    for (int j = 0; j < r + n; ++j)
      if (turn.patch)
        turn(cd.G.block<1, 6>(j, r).transpose());
      else
        turn(cd.G.block<1, 3>(j, r).transpose());
    for (int s = r; s < r + n; ++s)
      for (int t = s + 1; t < r + n; ++t) cd.G(t, s) = cd.G(s, t) = 0.5 * (cd.G(t, s) + cd.G(s, t));
  }
  for (int j = 0; j < m; ++j)
    for (int i = j + 1; i < m; ++i) cd.G(i, j) = cd.G(j, i);
}

Status checkStepSettings(Data& td, const StepSettings& s) {
  if (!(s.dt > 0.0) || !std::isfinite(s.dt))
    return detail::fail(td, Status::InvalidArgument, "settings.dt = %g must be positive", s.dt);
  if (!(s.beta >= 0.0 && s.beta <= 1.0))
    return detail::fail(td, Status::InvalidArgument, "settings.beta = %g must be in [0, 1]",
                        s.beta);
  if (!(s.maxPushVelocity >= 0.0) || !std::isfinite(s.maxPushVelocity))
    return detail::fail(td, Status::InvalidArgument, "settings.maxPushVelocity must be >= 0");
  if (!(s.activationDistance >= 0.0))
    return detail::fail(td, Status::InvalidArgument, "settings.activationDistance must be >= 0");
  return Status::Ok;
}

}  // namespace

Status assembleContactProblem(const ClusterModel& model, ClusterData& data,
                              const ContactProblem& problem, ContactData& cd, ConstVecRef q,
                              ConstVecRef v, ConstVecRef tauY, const StepSettings& s) {
  Data& td = data.treeData;
  if (cd.problem != &problem || &problem.model() != &model)
    return detail::fail(td, Status::WorkspaceMismatch,
                        "the ContactData / ContactProblem belong to another problem or model");
  CDYN_TRY(checkStepSettings(td, s));
  const ConstraintSet& set = problem.rows();
  const int nb = problem.bilateralCount();
  const int nc = static_cast<int>(problem.contacts().size());
  for (int i = 0; i < nc; ++i) {
    if (problem.contacts()[i].source != ContactSource::Caller) continue;
    const double nn = cd.normal[i].norm();
    const bool patch = problem.contacts()[i].cone != ConeType::Coulomb;
    const auto coefficient = [](double x) { return x >= 0.0 && std::isfinite(x); };
    if (!(nn > 0.0) || !std::isfinite(nn) || !std::isfinite(cd.gap[i]) || !coefficient(cd.mu[i]) ||
        (patch && !(coefficient(cd.muTorsion[i]) && coefficient(cd.muRolling[i]))))
      return detail::fail(td, Status::InvalidArgument,
                          "contact %d ('%s'): normal must be non-zero and finite, gap finite, mu "
                          "(and muTorsion, muRolling of a patch contact) >= 0 and finite",
                          i, problem.contacts()[i].name.c_str());
  }
  // Free motion (CE-ABA), the row Jacobian (world-aligned contact rows) and the Delassus matrix
  // of the cluster tree (PV-OSIMr) on CE-ABA's poses and articulated inertias (delassus_aba.hpp;
  // delassusMatrix's own position pass and pass 2 when a row is on a rotor CE-ABA keeps in its
  // output body's frame).
  CDYN_TRY(ceAba(model, data, q, v, tauY));
  cd.yddFree = data.ydd;
  for (int i = 0; i < model.ny; ++i) cd.ydot[i] = v[model.independentVelocity[i]];
  cd.ydotFree = cd.ydot + s.dt * cd.yddFree;
  // The bilateral rows' position errors phi (feedback below) come with the dense Jacobian (its
  // velocity pass leaves the articulated quantities of CE-ABA as they are).
  if (problem.bilateralRows() > 0) CDYN_TRY(constraintJacobian(model, data, set, cd.rows, q, v));
  if (detail::afterAbaServes(model, data, cd.rows))
    CDYN_TRY(detail::delassusAfterAba(model, data, cd.rows));
  else
    CDYN_TRY(delassusMatrix(model, data, set, cd.rows, q));
  // Contact frames, gaps, cones; the rows of the contacts turned into their frames.
  for (int i = 0; i < nc; ++i) {
    const PointContact& c = problem.contacts()[i];
    if (c.source == ContactSource::Ground) {
      const Transform& oMb = td.oMi[c.body];
      const GroundPlane& gp = problem.ground();
      cd.normal[i] = gp.normal;
      cd.gap[i] = gp.normal.dot(oMb.R * c.point + oMb.p) - gp.offset - c.radius;
      cd.mu[i] = c.mu;
      cd.muTorsion[i] = c.muTorsion;
      cd.muRolling[i] = c.muRolling;
    } else {
      cd.normal[i].normalize();
    }
    cd.frame[i] = contactFrame(cd.normal[i]);
    ConeBlock& b = cd.blocks[cd.contactBlock[i]];
    b.mu = cd.mu[i];
    b.type = cd.gap[i] > s.activationDistance ? ConeType::Inactive : c.cone;
    if (c.cone != ConeType::Coulomb) {
      b.muTorsion = cd.muTorsion[i];
      b.muRolling = cd.muRolling[i];
    }
  }
  contactJacobian(model, data, problem, cd);
  framedDelassus(problem, cd);
  // Free constraint velocity plus the position feedback.
  cd.g.noalias() = cd.Jc * cd.ydotFree;
  const int mb = problem.bilateralRows();
  cd.g.head(mb) += (s.beta / s.dt) * cd.rows.phi.head(mb);
  for (int i = 0; i < nc; ++i) {
    const int n = set.rowOffset(nb + i) + problem.contacts()[i].rows() - 1;
    const double gap = cd.gap[i];
    cd.g[n] += gap >= 0.0 ? gap / s.dt : std::max(s.beta * gap / s.dt, -s.maxPushVelocity);
  }
  if (!detail::allFiniteFast(cd.G) || !detail::allFiniteFast(cd.g))
    return detail::nonFiniteOutput(td, "assembleContactProblem: G / g",
                                   {{"q", detail::maxAbs(q), 1},
                                    {"v", detail::maxAbs(v), 2},
                                    {"tau", detail::maxAbs(tauY), 1}});
  return detail::ok(td);
}

namespace detail {

void contactImpulsesOnRows(const ContactProblem& problem, ContactData& cd) {
  const int nb = problem.bilateralCount();
  const int mb = problem.bilateralRows();
  cd.lambdaRows.head(mb) = cd.lambda.head(mb);
  for (int i = 0; i < static_cast<int>(cd.frame.size()); ++i) {
    const PointContact& c = problem.contacts()[i];
    const int r = problem.rows().rowOffset(nb + i);
    if (c.cone == ConeType::Coulomb) {
      cd.lambdaRows.segment<3>(r).noalias() = cd.frame[i] * cd.lambda.segment<3>(r);
      continue;
    }
    // T^T of the rows' map (assembleContactProblem): the force at the touching point adds the
    // torque (-radius n) x f about the centre.
    const double rad = c.source == ContactSource::Ground ? c.radius : 0.0;
    const Vec3 f = cd.lambda.segment<3>(r + 3);
    const Vec3 tau(cd.lambda[r] + rad * f[1], cd.lambda[r + 1] - rad * f[0], cd.lambda[r + 2]);
    cd.lambdaRows.segment<3>(r).noalias() = cd.frame[i] * tau;
    cd.lambdaRows.segment<3>(r + 3).noalias() = cd.frame[i] * f;
  }
}

}  // namespace detail

}  // namespace clusterdyn
