#include "clusterdyn/cluster_data.hpp"

#include <algorithm>

namespace clusterdyn {

ClusterData::ClusterData(const ClusterModel& m, bool denseMatrices)
    : model(&m), treeData(m.treeModel, denseMatrices) {
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

}  // namespace clusterdyn
