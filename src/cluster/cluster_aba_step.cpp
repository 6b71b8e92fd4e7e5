// Per-cluster steps of CE-ABA (Chignoli et al. 2023, Alg. 1). A constrained cluster k with m
// bodies and d independent coordinates uses
//   S_k  = JXJ diag(S_i) G_k                                (6m x d, eq. 15)
//   c_k  = JXJ [diag(S_i) g_k + stack(v_i x S_i qd_i)]      (6m,     eq. 19)
//   U = IA S,  D = S^T U,  u = tau - S^T pA                 (eq. 53)
//   IA_out += Xh^T (IA - U D^-1 U^T) Xh,                    (eq. 59-60)
//   pA_out += Xh^T (pA + Ia c + U D^-1 u)                   (eq. 59-60)
//   y_ddot = D^-1 (u - U^T (Xh a_out + c)),  a = Xh a_out + c + S y_ddot   (eq. 53, 61)
// where Xh (6m x 6) is the one non-zero block column of kX_lambda (stacked b_X_output), and
// IA of a cluster stays block diagonal (children only touch the output body's 6x6 block).
// Xh is applied body by body as a transform (outputTb), never as a 6m x 6 matrix.
#include "cluster/cluster_aba_step.hpp"

#include "cluster/cluster_aba_composite.hpp"
#include "cluster/cluster_joint_dynamics.hpp"
#include "cluster/cluster_kinematics.hpp"
#include "core/check.hpp"
#include "core/small_spd.hpp"
#include "tree/aba_step.hpp"
#include "tree/axis_transforms.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn::detail {

namespace {

/// X^T IA_b X added to IAo: when no cluster hangs from b, IA_b is still the body's own inertia
/// and the cheap rigid-body transform does (a constant for a rotor on the output body); the full
/// 6x6 transform otherwise.
inline void addTransformedInertia(const ClusterModel& cm, const ClusterData& data, int b, int o,
                                  const Transform& T, Mat6& IAo) {
  const Model& tree = cm.treeModel;
  const Data& td = data.treeData;
  if (detail::fullScratch(data).outputOfCluster[b] || !data.rigidInertia[b])
    IAo += actInertia(T, td.IA[b]);
  else if (cm.axisymmetricLeaf[b] && tree.parent[b] == o)
    cm.axisymmetricInertiaInParent[b].addTo(IAo);
  else
    tree.inertias[b].transformedBy(T).addTo(IAo);
}

/// ratio: of the failed pivot test (PivotText; NaN when not known).
Status singular(Data& td, const Cluster& c,
                double ratio = std::numeric_limits<double>::quiet_NaN()) {
  return fail(td, Status::NotPositiveDefinite,
              "articulated inertia of cluster '%s' is singular (%s)", c.name.c_str(),
              PivotText(ratio, td.pivotFloor).c_str());
}

/// True when cluster k has rotors (ClusterWorkspace::rotors) and each still has its rigid inertia
/// in IA (no algorithm augmented it): their U, D and Ubar terms are then the workspace's
/// constants rotorU, rotorD, rotorUbar.
inline bool rigidRotors(const ClusterData& data, const Cluster& c, const ClusterWorkspace& w) {
  for (const int r : w.rotors)
    if (!data.rigidInertia[c.firstBody + r]) return false;
  return !w.rotors.empty();
}

/// Pass 2 with one independent coordinate (rotor-link pairs, belts, four-bars): S a 6m x 1
/// column, D a scalar.
Status articulatedScalar(const ClusterModel& cm, ClusterData& data, int k, const double* tau,
                         ForceCoordinates forces, RotorFrame frame) {
  const Cluster& c = cm.clusters[k];
  Data& td = data.treeData;
  ClusterWorkspace& w = detail::scratch(data)[k];
  const int o = c.outputBody;
  const bool rotors = rigidRotors(data, c, w);  // constant rotor terms
  const auto isRotor = [&](int b) { return rotors && w.constantS[b - c.firstBody] == 2; };
  const ClusterScratch& scr = detail::fullScratch(data);
  double D = rotors ? w.rotorD(0, 0) : 0.0;
  double u = forces == ForceCoordinates::Spanning
                 ? w.G.col(0).dot(Eigen::Map<const VecX>(tau + c.v0, c.nv))
                 : tau[c.y0];
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    const auto s = w.S.block<6, 1>(i, 0);
    auto U = w.U.block<6, 1>(i, 0);
    if (scr.abaRotor(b, frame)) {  // output body's frame: s = X_T S g, pA = rotorP (eq. 53: u)
      const OutputFrameRotor& r = scr.rotors[scr.rotorSlot[b]];
      u -= r.g * r.axis.dot(scr.rotorP[scr.rotorSlot[b]]);
      continue;
    }
    if (isRotor(b)) {
      U = w.rotorU.block<6, 1>(i, 0);
    } else {
      U.noalias() = td.IA[b] * s;  // eq. 53: U
      D += s.dot(U);               // eq. 53: D
    }
    u -= s.dot(td.pA[b]);  // eq. 53: u
  }
  if (cm.treeModel.hasArmature()) D += clusterArmatureScalar(cm.treeModel, c, w.G);
  if (!(D > 0.0)) return singular(td, c);
  const double Dinv = 1.0 / D;
  w.D(0, 0) = D;
  w.Dinv(0, 0) = Dinv;
  w.u[0] = u;
  Force Ubar = rotors ? Force(w.rotorUbar.col(0)) : Force::Zero();
  Force po = Force::Zero();
  Mat6 IAo = Mat6::Zero();
  double t = u;  // u - U^T c
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    if (scr.abaRotor(b, frame)) {  // eq. 59-60 in the output body's frame (Ubar: in rotorUbar)
      const int r = scr.rotorSlot[b];
      const Motion& cr = scr.rotorC[r];
      t -= scr.rotors[r].g * scr.rotors[r].Iaxis.dot(cr);
      if (o < 0) continue;
      cm.axisymmetricInertiaInParent[b].addTo(IAo);
      po += scr.rotorP[r] + scr.rotors[r].inertia * cr;
      continue;
    }
    const Transform& T = w.outputTb[b - c.firstBody];
    const auto U = w.U.block<6, 1>(i, 0);
    if (!isRotor(b)) Ubar += T.actForce(U);
    if (o < 0) continue;
    const Motion cb = w.c.segment<6>(i);
    addTransformedInertia(cm, data, b, o, T, IAo);
    Force pb = td.pA[b];
    pb.noalias() += td.IA[b] * cb;
    po += T.actForce(pb);
    t -= U.dot(cb);
  }
  w.Ubar.col(0) = Ubar;
  if (o < 0) return Status::Ok;
  IAo.noalias() -= (Dinv * Ubar) * Ubar.transpose();  // eq. 60
  po += Ubar * (Dinv * t);                            // eq. 60
  td.IA[o] += IAo;
  td.pA[o] += po;
  return Status::Ok;
}

/// Pass 2 with a small fixed number D of independent coordinates (e.g. the knee-ankle belt
/// pair, D = 2).
template <int D>
Status articulatedFixed(const ClusterModel& cm, ClusterData& data, int k, const double* tau,
                        ForceCoordinates forces, RotorFrame frame) {
  using Mat6D = Eigen::Matrix<double, 6, D>;
  using MatDD = Eigen::Matrix<double, D, D>;
  using VecD = Eigen::Matrix<double, D, 1>;
  const Cluster& c = cm.clusters[k];
  Data& td = data.treeData;
  ClusterWorkspace& w = detail::scratch(data)[k];
  const int o = c.outputBody;
  const bool rotors = rigidRotors(data, c, w);  // constant rotor terms
  const auto isRotor = [&](int b) { return rotors && w.constantS[b - c.firstBody] == 2; };
  MatDD Dm = rotors ? MatDD(w.rotorD) : MatDD::Zero();
  VecD u;
  if (forces == ForceCoordinates::Spanning)
    u.noalias() = w.G.transpose() * Eigen::Map<const VecX>(tau + c.v0, c.nv);
  else
    u = Eigen::Map<const VecD>(tau + c.y0);
  const ClusterScratch& scr = detail::fullScratch(data);
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    if (scr.abaRotor(b, frame)) {  // output body's frame: S = X_T s G_row, pA = rotorP (eq. 53: u)
      const OutputFrameRotor& r = scr.rotors[scr.rotorSlot[b]];
      u.noalias() -= w.G.row(r.row).transpose() * r.axis.dot(scr.rotorP[scr.rotorSlot[b]]);
      continue;
    }
    const Mat6D S = w.S.template block<6, D>(i, 0);
    if (isRotor(b)) {
      w.U.template block<6, D>(i, 0) = w.rotorU.template block<6, D>(i, 0);
    } else {
      const Mat6D U = td.IA[b] * S;  // eq. 53: U
      w.U.template block<6, D>(i, 0) = U;
      Dm.noalias() += S.transpose() * U;  // eq. 53: D
    }
    u.noalias() -= S.transpose() * td.pA[b];  // eq. 53: u
  }
  addClusterArmature(cm.treeModel, c, w.G, Dm);
  MatDD Dinv;
  double ratio;
  if (!invertPositiveDefinite<D>(Dm, Dinv, td.pivotFloor, &ratio)) return singular(td, c, ratio);
  w.D = Dm;
  w.Dinv = Dinv;
  w.u = u;
  Mat6D Ubar = rotors ? Mat6D(w.rotorUbar) : Mat6D::Zero();
  Mat6 IAo = Mat6::Zero();
  Force po = Force::Zero();
  VecD t = u;  // u - U^T c
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    if (scr.abaRotor(b, frame)) {  // eq. 59-60 in the output body's frame (Ubar: in rotorUbar)
      const int r = scr.rotorSlot[b];
      const Motion& cr = scr.rotorC[r];
      t.noalias() -= w.G.row(scr.rotors[r].row).transpose() * scr.rotors[r].Iaxis.dot(cr);
      if (o < 0) continue;
      cm.axisymmetricInertiaInParent[b].addTo(IAo);
      po += scr.rotorP[r] + scr.rotors[r].inertia * cr;
      continue;
    }
    const Transform& T = w.outputTb[b - c.firstBody];
    const Mat6D U = w.U.template block<6, D>(i, 0);
    if (!isRotor(b))
      for (int j = 0; j < D; ++j) Ubar.col(j) += T.actForce(U.col(j));
    if (o < 0) continue;
    addTransformedInertia(cm, data, b, o, T, IAo);
    const Motion cb = w.c.segment<6>(i);
    po += T.actForce(td.pA[b] + td.IA[b] * cb);
    t.noalias() -= U.transpose() * cb;
  }
  w.Ubar = Ubar;
  if (o < 0) return Status::Ok;
  const Mat6D UbarDinv = Ubar * Dinv;
  IAo.noalias() -= UbarDinv * Ubar.transpose();  // eq. 60
  po.noalias() += UbarDinv * t;                  // eq. 60
  td.IA[o] += IAo;
  td.pA[o] += po;
  return Status::Ok;
}

/// D^-1 = L^-T L^-1 from the Cholesky factor L of D (w.llt) into w.Dinv, by column-oriented
/// substitution (X = L^-1 in w.Linv): at d ~ 15 a quarter of the instructions of Eigen's blocked
/// triangular solve against the identity.
void inverseFromCholesky(ClusterWorkspace& w, int d) {
  const double* L = w.llt.matrixLLT().data();  // column major, d x d, lower triangle
  double* X = w.Linv.data();
  for (int j = 0; j < d; ++j) {  // column j of X: L x = e_j
    double* x = X + static_cast<std::ptrdiff_t>(j) * d;
    for (int i = 0; i < d; ++i) x[i] = i == j ? 1.0 : 0.0;
    for (int kk = j; kk < d; ++kk) {
      const double* lk = L + static_cast<std::ptrdiff_t>(kk) * d;
      const double xk = x[kk] / lk[kk];
      x[kk] = xk;
      for (int i = kk + 1; i < d; ++i) x[i] -= lk[i] * xk;
    }
  }
  for (int j = 0; j < d; ++j)  // D^-1(i, j) = sum_{k >= max(i, j)} X(k, i) X(k, j)
    for (int i = j; i < d; ++i) {
      const double* xi = X + static_cast<std::ptrdiff_t>(i) * d;
      const double* xj = X + static_cast<std::ptrdiff_t>(j) * d;
      double v = 0.0;
      for (int kk = i; kk < d; ++kk) v += xi[kk] * xj[kk];
      w.Dinv(i, j) = v;
      w.Dinv(j, i) = v;
    }
}

/// Pass 2 of articulatedGeneric on the column pattern of S (ClusterWorkspace::sCols): the same
/// U, D, u, Ubar, body by body and column by column with 6-vectors (no dynamic-size products),
/// D's lower triangle only, and U^T c kept (w.Utc) for pass 3.
Status articulatedSparse(const ClusterModel& cm, ClusterData& data, int k, const double* tau,
                         ForceCoordinates forces) {
  const Cluster& c = cm.clusters[k];
  Data& td = data.treeData;
  ClusterWorkspace& w = detail::scratch(data)[k];
  const int o = c.outputBody, d = c.ny;
  if (forces == ForceCoordinates::Spanning)
    w.u.noalias() = w.G.transpose() * Eigen::Map<const VecX>(tau + c.v0, c.nv);
  else
    w.u = Eigen::Map<const VecX>(tau + c.y0, d);
  w.D.setZero();
  w.Ubar.setZero();
  w.Utc.setZero();
  Mat6 IAo = Mat6::Zero();
  Force po = Force::Zero();
  if (w.composite.active)  // a multi-dof joint: composite-inertia form, U not written
    compositeArticulatedTerms(cm, data, k, IAo, po);
  const int end = w.composite.active ? c.firstBody : c.firstBody + c.nbodies;
  for (int b = c.firstBody; b < end; ++b) {  // column by column on the pattern of S
    const int l = b - c.firstBody, i = 6 * l;
    const Mat6& IA = td.IA[b];
    const Force& pA = td.pA[b];
    const Motion cb = w.c.segment<6>(i);
    const Transform& T = w.outputTb[l];
    const int* cols = w.sCols.data() + w.sColStart[l];
    const int n = w.sColStart[l + 1] - w.sColStart[l];
    for (int a = 0; a < n; ++a) {
      const int j = cols[a];
      const auto s = w.S.block<6, 1>(i, j);
      auto U = w.U.block<6, 1>(i, j);
      U.noalias() = IA * s;         // eq. 53: U (IA block diagonal)
      for (int e = 0; e <= a; ++e)  // eq. 53: D = S^T U, lower triangle (cols sorted)
        w.D(j, cols[e]) += U.dot(w.S.block<6, 1>(i, cols[e]));
      w.u[j] -= s.dot(pA);  // eq. 53: u
      w.Utc[j] += U.dot(cb);
      w.Ubar.col(j) += T.actForce(U);  // Ubar = Xh^T U
    }
    if (o < 0) continue;
    addTransformedInertia(cm, data, b, o, T, IAo);
    po += T.actForce(pA + IA * cb);
  }
  w.D.triangularView<Eigen::StrictlyUpper>() = w.D.transpose();
  addClusterArmature(cm.treeModel, c, w.G, w.D);
  w.llt.compute(w.D);
  if (double ratio; !choleskyAboveFloor(w.llt, w.D, td.pivotFloor, &ratio))
    return singular(td, c, ratio);
  inverseFromCholesky(w, d);
  if (o < 0) return Status::Ok;
  w.tmpd = w.u - w.Utc;  // u - U^T c
  w.UbarDinv.noalias() = w.Ubar.lazyProduct(w.Dinv);
  IAo.noalias() -= w.UbarDinv.lazyProduct(w.Ubar.transpose());  // eq. 59-60
  po.noalias() += w.UbarDinv * w.tmpd;  // eq. 59-60: Xh^T (pA + Ia c + U D^-1 u)
  td.IA[o] += IAo;
  td.pA[o] += po;
  return Status::Ok;
}

/// Pass 2 with any number of independent coordinates (workspace storage, no heap).
Status articulatedGeneric(const ClusterModel& cm, ClusterData& data, int k, const double* tau,
                          ForceCoordinates forces) {
  const Cluster& c = cm.clusters[k];
  Data& td = data.treeData;
  ClusterWorkspace& w = detail::scratch(data)[k];
  if (!w.sColStart.empty()) return articulatedSparse(cm, data, k, tau, forces);
  const int o = c.outputBody;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {  // eq. 53: U (IA block diagonal)
    const int i = 6 * (b - c.firstBody);
    w.U.middleRows<6>(i).noalias() = td.IA[b] * w.S.middleRows<6>(i);
  }
  w.D.noalias() = w.S.transpose() * w.U;  // eq. 53: D
  addClusterArmature(cm.treeModel, c, w.G, w.D);
  w.llt.compute(w.D);
  if (double ratio; !choleskyAboveFloor(w.llt, w.D, td.pivotFloor, &ratio))
    return singular(td, c, ratio);
  w.Dinv.setIdentity();
  w.llt.solveInPlace(w.Dinv);
  if (forces == ForceCoordinates::Spanning)
    w.u.noalias() = w.G.transpose() * Eigen::Map<const VecX>(tau + c.v0, c.nv);
  else
    w.u = Eigen::Map<const VecX>(tau + c.y0, c.ny);
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)  // eq. 53: u
    w.u.noalias() -= w.S.middleRows<6>(6 * (b - c.firstBody)).transpose() * td.pA[b];
  // Xh^T (IA - U D^-1 U^T) Xh = sum_b X_b^T IA_b X_b - Ubar D^-1 Ubar^T, Ubar = Xh^T U (eq. 59-60).
  w.Ubar.setZero();
  Mat6 IAo = Mat6::Zero();
  Force po = Force::Zero();
  w.tmpd = w.u;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    const Transform& T = w.outputTb[b - c.firstBody];
    for (int j = 0; j < c.ny; ++j) w.Ubar.col(j) += T.actForce(w.U.block<6, 1>(i, j));
    if (o < 0) continue;
    addTransformedInertia(cm, data, b, o, T, IAo);
    const Motion cb = w.c.segment<6>(i);
    po += T.actForce(td.pA[b] + td.IA[b] * cb);
    w.tmpd.noalias() -= w.U.middleRows<6>(i).transpose() * cb;  // u - U^T c
  }
  if (o < 0) return Status::Ok;
  w.UbarDinv.noalias() = w.Ubar * w.Dinv;
  IAo.noalias() -= w.UbarDinv * w.Ubar.transpose();
  po.noalias() += w.UbarDinv * w.tmpd;  // eq. 59-60: Xh^T (pA + Ia c + U D^-1 u)
  td.IA[o] += IAo;
  td.pA[o] += po;
  return Status::Ok;
}

/// Pass 3 with one independent coordinate (eq. 53 and 61): accelerationsOf<1> with scalars.
void accelerationsScalar(const ClusterModel& cm, ClusterData& data, int k, const Motion& ao,
                         RotorFrame frame) {
  const Cluster& c = cm.clusters[k];
  Data& td = data.treeData;
  ClusterWorkspace& w = detail::scratch(data)[k];
  const int last = c.firstBody + c.nbodies;
  const ClusterScratch& scr = detail::fullScratch(data);
  double t = w.u[0];
  for (int b = c.firstBody; b < last; ++b) {  // a' = Xh a_out + c
    const int i = 6 * (b - c.firstBody);
    if (scr.abaRotor(b, frame)) {  // output body's frame: a' = a_out + c_r
      const int r = scr.rotorSlot[b];
      t -= scr.rotors[r].g * scr.rotors[r].Iaxis.dot(ao + scr.rotorC[r]);
      continue;
    }
    Motion& ab = td.a_gf[b];
    ab = w.outputTb[b - c.firstBody].actInvMotion(ao) + w.c.segment<6>(i);
    t -= w.U.block<6, 1>(i, 0).dot(ab);
  }
  const double ydd = w.Dinv(0, 0) * t;  // eq. 53
  data.ydd[c.y0] = ydd;
  for (int b = c.firstBody; b < last; ++b)  // eq. 61 (rotors: completeRotorBodies)
    if (!scr.abaRotor(b, frame))
      td.a_gf[b].noalias() += w.S.block<6, 1>(6 * (b - c.firstBody), 0) * ydd;
  auto qdd = data.qdd.segment(c.v0, c.nv);
  qdd = w.g + w.G.col(0) * ydd;
}

/// Pass 3 after articulatedSparse (eq. 53 and 61): U^T (Xh a_out + c) = Ubar^T a_out + U^T c,
/// and S y_ddot on each body's column pattern.
void accelerationsSparse(const ClusterModel& cm, ClusterData& data, int k, const Motion& ao) {
  const Cluster& c = cm.clusters[k];
  Data& td = data.treeData;
  ClusterWorkspace& w = detail::scratch(data)[k];
  w.tmpd = w.u - w.Utc;
  w.tmpd.noalias() -= w.Ubar.transpose() * ao;
  auto ydd = data.ydd.segment(c.y0, c.ny);
  ydd.noalias() = w.Dinv * w.tmpd;                               // eq. 53
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {  // eq. 61
    const int l = b - c.firstBody, i = 6 * l;
    Motion ab = w.outputTb[l].actInvMotion(ao) + w.c.segment<6>(i);
    for (int n = w.sColStart[l]; n < w.sColStart[l + 1]; ++n) {
      const int j = w.sCols[n];
      ab.noalias() += w.S.block<6, 1>(i, j) * ydd[j];
    }
    td.a_gf[b] = ab;
  }
  auto qdd = data.qdd.segment(c.v0, c.nv);
  qdd = w.g;
  qdd.noalias() += w.G * ydd;
}

/// Pass 3 after the composite pass 2 (ClusterWorkspace::composite), without S: y_ddot (eq. 53)
/// from U^T (Xh a_out + c) = Ubar^T a_out + U^T c, qdd = G y_ddot + g, and the bodies'
/// accelerations by the forward sweep a_b = X_b a_parent + v_b x S_b qd_b + S_b qdd_b
/// (Featherstone 2008, Table 5.1), eq. 61's Xh a_out + c + S y_ddot summed joint by joint.
void accelerationsComposite(const ClusterModel& cm, ClusterData& data, int k, const Motion& ao) {
  const Cluster& c = cm.clusters[k];
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  ClusterWorkspace& w = detail::scratch(data)[k];
  w.tmpd = w.u - w.Utc;
  w.tmpd.noalias() -= w.Ubar.transpose() * ao;
  auto ydd = data.ydd.segment(c.y0, c.ny);
  ydd.noalias() = w.Dinv * w.tmpd;  // eq. 53
  auto qdd = data.qdd.segment(c.v0, c.nv);
  qdd = w.g;
  qdd.noalias() += w.G * ydd;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {  // parents before children
    const int p = tree.parent[b];
    const Motion& ap = p >= c.firstBody ? td.a_gf[p] : ao;  // the cluster's roots: on ao's body
    Motion a = td.liMi[b].actInvMotion(ap) + td.c[b];
    a += jointMotion(tree.joints[b], data.qdd.data() + tree.idx_v[b]);
    td.a_gf[b] = a;
  }
}

/// Pass 3 with D independent coordinates (D = Eigen::Dynamic: any), eq. 53 and 61.
template <int D>
void accelerationsOf(const ClusterModel& cm, ClusterData& data, int k, const Motion& ao,
                     RotorFrame frame) {
  const Cluster& c = cm.clusters[k];
  Data& td = data.treeData;
  ClusterWorkspace& w = detail::scratch(data)[k];
  if (D == Eigen::Dynamic && !w.sColStart.empty())  // after articulatedSparse
    return w.composite.active ? accelerationsComposite(cm, data, k, ao)
                              : accelerationsSparse(cm, data, k, ao);
  const int d = c.ny;
  const ClusterScratch& scr = detail::fullScratch(data);
  auto t = w.tmpd.template head<D>(d);
  t = w.u.template head<D>(d);
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {  // a' = Xh a_out + c
    const int i = 6 * (b - c.firstBody);
    if (D != Eigen::Dynamic && scr.abaRotor(b, frame)) {  // output body's frame: a' = a_out + c_r
      const int r = scr.rotorSlot[b];
      t.noalias() -= w.G.row(scr.rotors[r].row).transpose().template head<D>(d) *
                     scr.rotors[r].Iaxis.dot(ao + scr.rotorC[r]);
      continue;
    }
    const Motion ab = w.outputTb[b - c.firstBody].actInvMotion(ao) + w.c.segment<6>(i);
    td.a_gf[b] = ab;
    t.noalias() -= w.U.template block<6, D>(i, 0, 6, d).transpose() * ab;
  }
  auto ydd = data.ydd.template segment<D>(c.y0, d);
  ydd.noalias() = w.Dinv.template topLeftCorner<D, D>(d, d) * t;  // eq. 53
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)     // eq. 61
    if (D == Eigen::Dynamic || !scr.abaRotor(b, frame))           // (rotors: completeRotorBodies)
      td.a_gf[b].noalias() += w.S.template block<6, D>(6 * (b - c.firstBody), 0, 6, d) * ydd;
  auto qdd = data.qdd.segment(c.v0, c.nv);
  qdd = w.g;
  qdd.noalias() += w.G * ydd;
}

}  // namespace

void clusterInertiaAndBiasStep(const ClusterModel& cm, ClusterData& data, int k, const Force* fext,
                               RotorFrame frame) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  const ClusterScratch& scr = detail::fullScratch(data);
  const Cluster& c = cm.clusters[k];
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const SpatialInertia& I = tree.inertias[b];
    data.rigidInertia[b] = 1;
    if (scr.abaRotor(b, frame)) continue;  // clusterRotorBias
    td.IA[b] = I.matrix();
    td.pA[b] = crossForce(td.v[b], I * td.v[b]);
    if (fext) td.pA[b] -= fext[b];
  }
  if (c.constrained()) clusterMotionSubspace(cm, data, k, Bias::Compute, frame);
}

void clusterInertiaAndBias(const ClusterModel& cm, ClusterData& data, const Force* fext) {
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k)
    clusterInertiaAndBiasStep(cm, data, k, fext, RotorFrame::Body);
}

void clusterRotorBias(const ClusterModel& cm, ClusterData& data, int k, const double* v) {
  ClusterScratch& s = detail::fullScratch(data);
  const Cluster& c = cm.clusters[k];
  const Data& td = data.treeData;
  for (const int l : s.clusters[k].rotors) {
    const int b = c.firstBody + l;
    if (!s.abaRotor(b, RotorFrame::Output)) continue;
    const int r = s.rotorSlot[b];
    const int o = s.rotors[r].parent;
    outputFrameRotorBias(s, r, o >= 0 ? td.v[o] : Motion::Zero(), v[s.rotors[r].iv]);
  }
}

Status clusterArticulatedStep(const ClusterModel& cm, ClusterData& data, int k, const double* tau,
                              ForceCoordinates forces, RotorFrame frame) {
  const Cluster& c = cm.clusters[k];
  if (!c.constrained()) {  // one body: the ABA step (Featherstone Table 7.1)
    const int b = c.firstBody;
    return articulatedBodyStep(
        cm.treeModel, data.treeData, b, c.outputBody,
        forces == ForceCoordinates::Spanning ? tau + cm.treeModel.idx_v[b] : tau + c.y0);
  }
  switch (c.ny) {
    case 1:
      if (frame == RotorFrame::Output && detail::scratch(data)[k].flatScalar)
        return articulatedFlat(cm, data, k, tau, forces);  // cluster_aba_flat.cpp
      return articulatedScalar(cm, data, k, tau, forces, frame);
    case 2:
      return articulatedFixed<2>(cm, data, k, tau, forces, frame);
    case 3:
      return articulatedFixed<3>(cm, data, k, tau, forces, frame);
    default:
      return articulatedGeneric(cm, data, k, tau, forces);
  }
}

void clusterAccelerationStep(const ClusterModel& cm, ClusterData& data, int k, const Motion& ao,
                             RotorFrame frame) {
  const Cluster& c = cm.clusters[k];
  if (!c.constrained()) {
    const int b = c.firstBody;
    const int iv = cm.treeModel.idx_v[b];
    accelerationStep(cm.treeModel, data.treeData, b, ao, data.qdd.data() + iv);
    data.ydd.segment(c.y0, c.ny) = data.qdd.segment(iv, c.nv);
    return;
  }
  switch (c.ny) {
    case 1:
      if (frame == RotorFrame::Output && detail::scratch(data)[k].flatScalar)
        return accelerationsFlat(cm, data, k, ao);  // cluster_aba_flat.cpp
      return accelerationsScalar(cm, data, k, ao, frame);
    case 2:
      return accelerationsOf<2>(cm, data, k, ao, frame);
    case 3:
      return accelerationsOf<3>(cm, data, k, ao, frame);
    default:
      return accelerationsOf<Eigen::Dynamic>(cm, data, k, ao, frame);
  }
}

void clusterForceBackwardStep(const ClusterModel& cm, ClusterData& data, int k, Force* dp,
                              double* du) {
  const Cluster& c = cm.clusters[k];
  const Data& td = data.treeData;
  const int o = c.outputBody;
  if (!c.constrained()) {
    const int b = c.firstBody;
    const Joint& joint = cm.treeModel.joints[b];
    const int n = joint.nv;
    Eigen::Map<VecX> dub(du + c.y0, n);
    dub.noalias() = -joint.S.transpose() * dp[b];
    if (o < 0) return;
    Force f = dp[b];
    if (n == 1) {
      f += td.U[b].col(0) * (td.Dinv[b](0, 0) * dub[0]);
    } else {
      Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> t(n);
      t.noalias() = td.Dinv[b] * dub;
      f.noalias() += td.U[b].leftCols(n) * t;
    }
    dp[o] += forceInParentFrame(cm.treeModel.axisRotation[b], td.liMi[b], f);
    return;
  }
  ClusterWorkspace& w = detail::scratch(data)[k];
  Eigen::Map<VecX> duk(du + c.y0, c.ny);
  duk.setZero();
  Force po = Force::Zero();
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    duk.noalias() -= w.S.middleRows<6>(i).transpose() * dp[b];
    if (o >= 0) po += w.outputTb[b - c.firstBody].actForce(dp[b]);
  }
  if (o < 0) return;
  w.tmpd.noalias() = w.Dinv * duk;
  po.noalias() += w.Ubar * w.tmpd;
  dp[o] += po;
}

void clusterForceForwardStep(const ClusterModel& cm, ClusterData& data, int k, const Motion& dao,
                             const double* du, double* dydd, Motion* da) {
  const Cluster& c = cm.clusters[k];
  const Data& td = data.treeData;
  if (!c.constrained()) {
    const int b = c.firstBody;
    const Joint& joint = cm.treeModel.joints[b];
    const int n = joint.nv;
    Motion a = td.liMi[b].actInvMotion(dao);
    if (n == 1) {
      const double x = td.Dinv[b](0, 0) * (du[c.y0] - td.U[b].col(0).dot(a));
      dydd[c.y0] = x;
      a.noalias() += joint.S.col(0) * x;
    } else {
      Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> r = Eigen::Map<const VecX>(du + c.y0, n);
      r.noalias() -= td.U[b].leftCols(n).transpose() * a;
      Eigen::Map<VecX> x(dydd + c.y0, n);
      x.noalias() = td.Dinv[b] * r;
      a.noalias() += joint.S * x;
    }
    da[b] = a;
    return;
  }
  ClusterWorkspace& w = detail::scratch(data)[k];
  w.tmpd = Eigen::Map<const VecX>(du + c.y0, c.ny);
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int i = 6 * (b - c.firstBody);
    da[b] = w.outputTb[b - c.firstBody].actInvMotion(dao);
    if (!w.composite.active) w.tmpd.noalias() -= w.U.middleRows<6>(i).transpose() * da[b];
  }
  if (w.composite.active) w.tmpd.noalias() -= w.Ubar.transpose() * dao;  // U^T Xh = Ubar^T
  Eigen::Map<VecX> x(dydd + c.y0, c.ny);
  x.noalias() = w.Dinv * w.tmpd;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
    da[b].noalias() += w.S.middleRows<6>(6 * (b - c.firstBody)) * x;
}

}  // namespace clusterdyn::detail
