#include "clusterdyn/cluster_data.hpp"

#include <algorithm>

#include "cluster/cluster_workspace.hpp"

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
    w.outputTb.assign(c.nbodies, Transform());
  }
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
  b += sizeof(ClusterScratch) + bufferBytes(clusters);
  for (const ClusterWorkspace& w : clusters)
    b += bufferBytes(w.G) + bufferBytes(w.g) + bufferBytes(w.K) + bufferBytes(w.k) +
         bufferBytes(w.phi) + bufferBytes(w.Kd) + bufferBytes(w.Ki) + bufferBytes(w.kd) +
         bufferBytes(w.piv) + bufferBytes(w.Gd) + bufferBytes(w.dq) + bufferBytes(w.S) +
         bufferBytes(w.c) + bufferBytes(w.U) + bufferBytes(w.D) +
         2 * bufferBytes(w.D) /* llt: matrix and scratch */ + bufferBytes(w.Dinv) +
         bufferBytes(w.u) + bufferBytes(w.Ubar) + bufferBytes(w.UbarDinv) + bufferBytes(w.tmpd) +
         bufferBytes(w.qWarm) + bufferBytes(w.outputTb);
  return b;
}

}  // namespace clusterdyn
