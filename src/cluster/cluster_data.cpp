#include "clusterdyn/cluster_data.hpp"

#include <algorithm>

#include "cluster/cluster_aba_composite.hpp"
#include "cluster/cluster_workspace.hpp"
#include "cluster/loop_constraints.hpp"

namespace clusterdyn {

namespace detail {

ClusterScratchHandle::ClusterScratchHandle() : p_(std::make_unique<ClusterScratch>()) {}
ClusterScratchHandle::~ClusterScratchHandle() = default;
ClusterScratchHandle::ClusterScratchHandle(const ClusterScratchHandle& other)
    : p_(other.p_ ? std::make_unique<ClusterScratch>(*other.p_) : nullptr) {}
ClusterScratchHandle& ClusterScratchHandle::operator=(const ClusterScratchHandle& other) {
  if (this == &other) return *this;
  if (!other.p_)
    p_.reset();
  else if (p_)
    *p_ = *other.p_;  // reuses the buffers when the sizes match
  else
    p_ = std::make_unique<ClusterScratch>(*other.p_);
  return *this;
}
ClusterScratchHandle::ClusterScratchHandle(ClusterScratchHandle&& other) noexcept = default;
ClusterScratchHandle& ClusterScratchHandle::operator=(ClusterScratchHandle&& other) noexcept =
    default;

namespace {

/// The state-independent parts of cluster k's scratch (cluster_workspace.hpp): constant rows of
/// S (Chignoli et al. 2023, eq. 15: an explicit cluster's body on the output body has no JXJ
/// term) and the rotors' constant U, D and Ubar terms (eq. 53, 59).
void setConstantRows(const ClusterModel& m, int k, ClusterWorkspace& w) {
  const Cluster& c = m.clusters[k];
  const Model& tree = m.treeModel;
  const int d = c.ny;
  w.constantS.assign(c.nbodies, 0);
  w.rotors.clear();
  w.rotorU.setZero(6 * c.nbodies, d);
  w.rotorD.setZero(d, d);
  w.rotorUbar.setZero(6, d);
  w.rotorInertia = SpatialInertia();
  w.relationTerms.clear();
  w.relationStart.assign(1, 0);
  for (const int r : c.relations) {
    for (const auto& [iv, coeff] : m.relations[r].terms)
      w.relationTerms.push_back({tree.idx_q[tree.velocityOwner[iv]], iv, coeff});
    w.relationStart.push_back(static_cast<int>(w.relationTerms.size()));
  }
  w.bodiesOnOutput = true;
  w.flatScalar = false;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
    w.bodiesOnOutput = w.bodiesOnOutput && tree.parent[b] < c.firstBody;
  // (The builder makes workspaces before G and the rotors are known: nothing constant then.)
  if (!c.constrained() || c.implicit() || c.G.rows() != c.nv || c.G.cols() != d ||
      static_cast<int>(m.axisymmetricLeaf.size()) != tree.nbodies)
    return;
  w.flatScalar = w.bodiesOnOutput && d == 1;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    if (tree.parent[b] >= c.firstBody) continue;  // inside the cluster: S depends on q (JXJ)
    const int i = 6 * (b - c.firstBody);
    const int lv = tree.idx_v[b] - c.v0;
    w.constantS[b - c.firstBody] = 1;
    w.S.middleRows<6>(i).noalias() = tree.joints[b].S.col(0) * c.G.row(lv);
    if (!m.axisymmetricLeaf[b]) continue;
    w.constantS[b - c.firstBody] = 2;
    w.rotors.push_back(b - c.firstBody);
    w.rotorInertia += m.axisymmetricInertiaInParent[b];
    const Mat6 I = tree.inertias[b].matrix();
    w.rotorU.middleRows<6>(i).noalias() = I * w.S.middleRows<6>(i);
    w.rotorD.noalias() += w.S.middleRows<6>(i).transpose() * w.rotorU.middleRows<6>(i);
    // X_b^T U_b at the zero angle: the same at every angle for an axisymmetric rotor.
    for (int j = 0; j < d; ++j)
      w.rotorUbar.col(j) += tree.jointPlacement[b].actForce(w.rotorU.block<6, 1>(i, j));
  }
}

/// True when body a is b or one of b's ancestors.
bool ancestorOrSelf(const Model& tree, int a, int b) {
  for (; b >= 0; b = tree.parent[b])
    if (b == a) return true;
  return false;
}

/// ClusterWorkspace::idleColumn of implicit cluster k (no explicit relations): joint b of
/// independent coordinate j is idle when, for every loop of the cluster that has b on exactly
/// one of its paths (constraintJacobian: a joint on both paths cancels exactly), the loop is
/// spherical (translation rows only), b is its predecessor body, b's joint is revolute with
/// motion subspace [axis; 0] in b's frame, and P's origin lies on that axis: the velocity of P's
/// origin caused by the joint, which is the column of K, is then zero at every configuration.
void setIdleColumns(const ClusterModel& m, int k, ClusterWorkspace& w) {
  const Cluster& c = m.clusters[k];
  const Model& tree = m.treeModel;
  w.idleColumn.clear();
  if (!c.implicit() || !c.relations.empty() || static_cast<int>(c.independent.size()) != c.ny)
    return;
  w.idleColumn.assign(c.ny, 0);
  for (int j = 0; j < c.ny; ++j) {
    const int b = tree.velocityOwner[c.v0 + c.independent[j]];
    const Joint& joint = tree.joints[b];
    if (joint.type != JointType::Revolute || joint.nv != 1 || !joint.S.col(0).tail<3>().isZero(0.0))
      continue;
    const Vec3 axis = joint.S.col(0).head<3>();
    bool idle = true;
    for (const int l : c.loops) {
      const LoopJoint& lj = m.loops[l];
      const bool onP = ancestorOrSelf(tree, b, lj.predecessorBody);
      const bool onS = ancestorOrSelf(tree, b, lj.successorBody);
      if (onP == onS) continue;  // on neither path, or on both (the two terms cancel)
      const Vec3& p = lj.predecessorPlacement.p;
      if (onS || lj.Trot.cols() != 0 || lj.predecessorBody != b ||
          !(axis.cross(p).norm() <= 1e-12 * (1.0 + p.norm()))) {
        idle = false;
        break;
      }
    }
    w.idleColumn[j] = idle ? 1 : 0;
  }
}

/// The column pattern of S (cluster_workspace.hpp: sColStart, sCols) of constrained cluster k:
/// the columns of the non-zero entries of G in the rows of the body's joint (one row per joint
/// velocity: several for a multi-dof joint of a loop cluster), joined with its parent's pattern.
void setColumnPattern(const ClusterModel& m, int k, ClusterWorkspace& w) {
  const Cluster& c = m.clusters[k];
  const Model& tree = m.treeModel;
  const int d = c.ny;
  w.sColStart.clear();
  w.sCols.clear();
  if (!c.constrained()) return;
  std::vector<char> rowCols(static_cast<size_t>(c.nv) * d, 0);  // G's pattern, row major
  if (c.implicit()) {  // G = [I; -Kd^-1 Ki] (explicitForm): unit rows, dense dependent rows
    if (static_cast<int>(c.independent.size()) != d) return;
    for (int j = 0; j < d; ++j) rowCols[static_cast<size_t>(c.independent[j]) * d + j] = 1;
    for (int r : c.dependent)  // idle columns of G: zero on the dependent rows (explicitForm)
      for (int j = 0; j < d; ++j)
        rowCols[static_cast<size_t>(r) * d + j] = w.idleColumn.empty() || !w.idleColumn[j];
  } else {
    if (c.G.rows() != c.nv || c.G.cols() != d) return;  // (builder: G not known yet)
    for (int r = 0; r < c.nv; ++r)
      for (int j = 0; j < d; ++j) rowCols[static_cast<size_t>(r) * d + j] = c.G(r, j) != 0.0;
  }
  std::vector<char> pattern(static_cast<size_t>(c.nbodies) * d, 0);  // per body
  w.sColStart.assign(1, 0);
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    const int p = tree.parent[b];
    char* own = pattern.data() + static_cast<size_t>(b - c.firstBody) * d;
    const char* row = rowCols.data() + static_cast<size_t>(tree.idx_v[b] - c.v0) * d;
    const int nj = tree.joints[b].nv;
    const char* up =
        p >= c.firstBody ? pattern.data() + static_cast<size_t>(p - c.firstBody) * d : nullptr;
    for (int j = 0; j < d; ++j) {
      own[j] = up && up[j];
      for (int a = 0; a < nj; ++a) own[j] = own[j] || row[static_cast<size_t>(a) * d + j];
      if (own[j]) w.sCols.push_back(j);
    }
    w.sColStart.push_back(static_cast<int>(w.sCols.size()));
  }
}

/// The model's rotors seen from their output bodies (OutputFrameRotor) and the per-rotor
/// buffers of the algorithms that treat them there.
void setOutputFrameRotors(const ClusterModel& m, ClusterScratch& s) {
  const Model& tree = m.treeModel;
  s.rotors.clear();
  s.rotorSlot.assign(tree.nbodies, -1);
  for (size_t k = 0; k < m.clusters.size(); ++k) {
    const Cluster& c = m.clusters[k];
    for (const int r : s.clusters[k].rotors) {
      const int b = c.firstBody + r;
      s.rotorSlot[b] = static_cast<int>(s.rotors.size());
      OutputFrameRotor rotor;
      rotor.body = b;
      rotor.parent = tree.parent[b];
      rotor.iv = tree.idx_v[b];
      rotor.axis = tree.jointPlacement[b].actMotion(Motion(tree.joints[b].S.col(0)));
      rotor.inertia = m.axisymmetricInertiaInParent[b];
      rotor.row = tree.idx_v[b] - c.v0;
      rotor.Iaxis = rotor.inertia * rotor.axis;
      rotor.aba = c.ny <= 3;
      if (c.ny == 1) rotor.g = c.G(rotor.row, 0);
      const SpatialInertia& I = rotor.inertia;
      const Motion& sx = rotor.axis;
      for (int j = 0; j < 6; ++j) {
        const Motion e = Motion::Unit(j);
        rotor.velocityForce.col(j) =
            I * crossMotion(e, sx) + crossForce(e, rotor.Iaxis) + crossForce(sx, I * e);
      }
      rotor.axisForce = crossForce(sx, rotor.Iaxis);
      rotor.axisInertia = sx.dot(rotor.Iaxis);
      s.rotors.push_back(rotor);
    }
  }
  s.deferredRotors.pending = false;
  s.rneaInertias = tree.inertias;
  for (const OutputFrameRotor& r : s.rotors)
    if (r.parent >= 0) s.rneaInertias[r.parent] += r.inertia;
  s.outputOfCluster.assign(tree.nbodies, 0);
  for (const Cluster& c : m.clusters)
    if (c.outputBody >= 0) s.outputOfCluster[c.outputBody] = 1;
  s.constantG.clear();
  if (!m.hasImplicitClusters())
    for (size_t k = 0; k < m.clusters.size(); ++k) {
      const Cluster& c = m.clusters[k];
      const MatX& G = s.clusters[k].G;
      for (int j = 0; j < c.ny; ++j)
        for (int i = 0; i < c.nv; ++i)
          if (G(i, j) != 0.0) s.constantG.push_back({c.v0 + i, c.y0 + j, G(i, j)});
    }
  s.deferredRotors.q.setZero(tree.nq);  // sized once: deferRotorBodies does not allocate
  s.deferredRotors.v.setZero(tree.nv);
  s.rotorC.assign(s.rotors.size(), Motion::Zero());
  s.rotorP.assign(s.rotors.size(), Force::Zero());
}

/// ClusterScratch::subtreeYEnd: the end of each cluster subtree's independent velocities, when
/// clusterMassMatrix can carry subtree blocks (a single floating root cluster 0, clusters numbered
/// depth first: the parent of each cluster is on the path to the cluster before it, and y0
/// follows the cluster order; 1-dof joints in constrained clusters); else left empty.
void setSubtreeRanges(const ClusterModel& m, ClusterScratch& s) {
  s.subtreeYEnd.clear();
  s.blockInertias.clear();
  const std::vector<Cluster>& cl = m.clusters;
  const int n = static_cast<int>(cl.size());
  if (n == 0) return;
  const Model& tree = m.treeModel;
  const Cluster& root = cl[0];
  if (root.parent >= 0 || root.constrained() || root.nbodies != 1 || root.y0 != 0 || root.ny != 6 ||
      tree.joints[root.firstBody].type != JointType::Floating)
    return;
  for (int k = 1; k < n; ++k) {
    int j = k - 1;
    while (j > cl[k].parent) j = cl[j].parent;
    if (cl[k].parent < 0 || j != cl[k].parent || cl[k].y0 != cl[k - 1].y0 + cl[k - 1].ny) return;
    if (cl[k].constrained() && cl[k].nv != cl[k].nbodies) return;  // 1-dof joints only
  }
  std::vector<int> end(n);
  for (int k = 0; k < n; ++k) end[k] = cl[k].y0 + cl[k].ny;
  for (int k = n - 1; k > 0; --k) end[cl[k].parent] = std::max(end[cl[k].parent], end[k]);
  s.subtreeYEnd = std::move(end);
  s.blockInertias = tree.inertias;
  for (int k = 1; k < n; ++k)
    if (cl[k].constrained()) s.blockInertias[cl[k].outputBody] += s.clusters[k].rotorInertia;
}

/// ClusterScratch::relationChecks: the relations of the clusters without loop joints, in
/// cluster order, with their terms as in each cluster's workspace; and placementBodies.
void setRelationChecks(const ClusterModel& m, ClusterScratch& s) {
  s.relationChecks.clear();
  s.relationCheckTerms.clear();
  s.placementBodies.clear();
  for (size_t k = 0; k < m.clusters.size(); ++k) {
    const Cluster& c = m.clusters[k];
    const ClusterWorkspace& w = s.clusters[k];
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
      if (!c.constrained() || w.constantS[b - c.firstBody] != 2) s.placementBodies.push_back(b);
    if (c.implicit()) continue;
    for (size_t r = 0; r < c.relations.size(); ++r) {
      s.relationCheckTerms.insert(s.relationCheckTerms.end(),
                                  w.relationTerms.begin() + w.relationStart[r],
                                  w.relationTerms.begin() + w.relationStart[r + 1]);
      s.relationChecks.push_back({static_cast<int>(k),
                                  static_cast<int>(s.relationCheckTerms.size()),
                                  m.relations[c.relations[r]].offset});
    }
  }
}

}  // namespace
}  // namespace detail

ClusterData::ClusterData(const ClusterModel& m, bool denseMatrices)
    : model(&m), treeData(m.treeModel, denseMatrices) {
  std::vector<ClusterWorkspace>& clusters = detail::scratch(*this);
  clusters.resize(m.clusters.size());
  for (size_t k = 0; k < m.clusters.size(); ++k) {
    const Cluster& c = m.clusters[k];
    ClusterWorkspace& w = clusters[k];
    const int n = c.nv, d = c.ny, r = c.constraintRows, six = 6 * c.nbodies;
    const int nd = static_cast<int>(c.dependent.size());
    w.G = c.G.size() ? c.G : MatX::Identity(n, d);
    w.g.setZero(n);
    w.K.setZero(r, n);
    w.k.setZero(r);
    w.phi.setZero(r);
    w.Kd.setZero(nd, nd);
    w.Ki.setZero(nd, d);
    w.kd.setZero(nd);
    w.piv.assign(nd, 0);
    w.Gd.setZero(nd, d);
    w.dq.setZero(nd);
    w.S.setZero(six, d);
    w.c.setZero(six);
    w.U.setZero(six, d);
    w.Ubar.setZero(6, d);
    w.UbarDinv.setZero(6, d);
    w.D.setZero(d, d);
    w.llt.compute(MatX::Identity(d, d));  // sizes the storage and initializes every member
    w.Dinv.setZero(d, d);
    w.u.setZero(d);
    w.tmpd.setZero(d);
    w.qWarm.setZero(c.nq);
    w.qSaved.setZero(c.nq);
    w.qTarget.setZero(c.nq);
    w.closureGd.setZero(nd, d);
    w.qTangent.setZero(c.nq);
    w.qPredicted.setZero(nd);
    w.qStepStart.setZero(nd);
    w.qStepDy.setZero(d);
    w.outputTb.assign(c.nbodies, Transform());
    w.Utc.setZero(d);
    w.Linv.setZero(d, d);
    detail::setConstantRows(m, static_cast<int>(k), w);
    detail::setIdleColumns(m, static_cast<int>(k), w);
    detail::setDependentOrder(m, static_cast<int>(k), w);  // loop_constraints.cpp
    detail::setColumnPattern(m, static_cast<int>(k), w);
    detail::setCompositeForm(m, static_cast<int>(k), w);  // cluster_aba_composite.cpp
  }
  detail::setOutputFrameRotors(m, detail::ClusterScratchAccess::get(*this));
  detail::setSubtreeRanges(m, detail::ClusterScratchAccess::get(*this));
  detail::setRelationChecks(m, detail::ClusterScratchAccess::get(*this));
  ydd.setZero(m.ny);
  qdd.setZero(m.treeModel.nv);
  tauY.setZero(m.ny);
  if (denseMatrices) H.setZero(m.ny, m.ny);
  C.setZero(m.ny);
  q = m.qReference.size() == m.treeModel.nq ? m.qReference : VecX::Zero(m.treeModel.nq);
  v.setZero(m.treeModel.nv);
  int maxNv = 0, maxNy = 0;
  for (const Cluster& c : m.clusters) maxNv = std::max(maxNv, c.nv), maxNy = std::max(maxNy, c.ny);
  Hblock.setZero(maxNv, maxNy);
  localBias.assign(m.treeModel.nbodies, Motion::Zero());
  rigidInertia.assign(m.treeModel.nbodies, 1);
}

const MatX& ClusterData::explicitMatrix(int k) const { return detail::scratch(*this)[k].G; }

const VecX& ClusterData::explicitBias(int k) const { return detail::scratch(*this)[k].g; }

const MatX& ClusterData::constraintJacobian(int k) const {
  // Only loop clusters fill the workspace's K; the relations of the others are constant.
  const Cluster& c = model->clusters[k];
  return c.implicit() ? detail::scratch(*this)[k].K : c.Kexplicit;
}

const VecX& ClusterData::constraintBias(int k) const { return detail::scratch(*this)[k].k; }

namespace {

template <typename T>
std::size_t bufferBytes(const std::vector<T>& x) {
  return x.capacity() * sizeof(T);
}
template <typename Derived>
std::size_t bufferBytes(const Eigen::PlainObjectBase<Derived>& x) {
  using M = Eigen::PlainObjectBase<Derived>;
  const bool dynamic =
      M::MaxRowsAtCompileTime == Eigen::Dynamic || M::MaxColsAtCompileTime == Eigen::Dynamic;
  return dynamic ? static_cast<std::size_t>(x.size()) * sizeof(typename M::Scalar) : 0;
}

}  // namespace

std::size_t ClusterData::heapBytes() const {
  const Data& t = treeData;
  std::size_t b = bufferBytes(t.liMi) + bufferBytes(t.oMi) + bufferBytes(t.v) + bufferBytes(t.a) +
                  bufferBytes(t.c) + bufferBytes(t.f) + bufferBytes(t.a_gf) + bufferBytes(t.IA) +
                  bufferBytes(t.pA) + bufferBytes(t.U) + bufferBytes(t.Dinv) + bufferBytes(t.u) +
                  bufferBytes(t.Ycrb) + bufferBytes(t.tau) + bufferBytes(t.ddq) +
                  bufferBytes(t.nle) + bufferBytes(t.M) + bufferBytes(t.J);
  b += bufferBytes(ydd) + bufferBytes(qdd) + bufferBytes(tauY) + bufferBytes(H) + bufferBytes(C) +
       bufferBytes(q) + bufferBytes(v) + bufferBytes(Hblock) + bufferBytes(localBias) +
       bufferBytes(rigidInertia);
  const std::vector<ClusterWorkspace>& clusters = detail::scratch(*this);
  const ClusterScratch& scr = detail::ClusterScratchAccess::get(*this);
  b += sizeof(ClusterScratch) + bufferBytes(clusters) + bufferBytes(scr.rotors) +
       bufferBytes(scr.rotorSlot) + bufferBytes(scr.constantG) + bufferBytes(scr.deferredRotors.v) +
       bufferBytes(scr.deferredRotors.q) + bufferBytes(scr.rotorC) + bufferBytes(scr.rotorP) +
       bufferBytes(scr.subtreeYEnd) + bufferBytes(scr.blockInertias) +
       bufferBytes(scr.rneaInertias) + bufferBytes(scr.relationChecks) +
       bufferBytes(scr.placementBodies) + bufferBytes(scr.relationCheckTerms);
  for (const ClusterWorkspace& w : clusters) {
    b += bufferBytes(w.kdOrder) + bufferBytes(w.kdPattern.lStart) + bufferBytes(w.kdPattern.lRows) +
         bufferBytes(w.kdPattern.uStart) + bufferBytes(w.kdPattern.uCols) +
         bufferBytes(w.kdPattern.rows) + bufferBytes(w.axesOut);
    b += bufferBytes(w.G) + bufferBytes(w.g) + bufferBytes(w.K) + bufferBytes(w.k) +
         bufferBytes(w.phi) + bufferBytes(w.Kd) + bufferBytes(w.Ki) + bufferBytes(w.kd) +
         bufferBytes(w.piv) + bufferBytes(w.Gd) + bufferBytes(w.dq) + bufferBytes(w.S) +
         bufferBytes(w.c) + bufferBytes(w.U) + bufferBytes(w.D) +
         2 * bufferBytes(w.D) /* llt: matrix and scratch */ + bufferBytes(w.Dinv) +
         bufferBytes(w.u) + bufferBytes(w.Ubar) + bufferBytes(w.UbarDinv) + bufferBytes(w.tmpd) +
         bufferBytes(w.qWarm) + bufferBytes(w.qSaved) + bufferBytes(w.qTarget) +
         bufferBytes(w.closureGd) + bufferBytes(w.qTangent) + bufferBytes(w.qPredicted) +
         bufferBytes(w.qStepStart) + bufferBytes(w.qStepDy) + bufferBytes(w.outputTb) +
         bufferBytes(w.constantS) + bufferBytes(w.rotors) + bufferBytes(w.rotorU) +
         bufferBytes(w.rotorD) + bufferBytes(w.rotorUbar) + bufferBytes(w.relationTerms) +
         bufferBytes(w.relationStart) + bufferBytes(w.sColStart) + bufferBytes(w.sCols) +
         bufferBytes(w.idleColumn) + bufferBytes(w.Utc) + bufferBytes(w.Linv) +
         bufferBytes(w.composite.pairs) + bufferBytes(w.composite.rigidIC) +
         bufferBytes(w.composite.generalIC) + bufferBytes(w.composite.fp) +
         bufferBytes(w.composite.fq) + bufferBytes(w.composite.So) + bufferBytes(w.composite.F) +
         bufferBytes(w.composite.HG) + bufferBytes(w.composite.Jp) + bufferBytes(w.composite.Jq);
  }
  return b;
}

}  // namespace clusterdyn
