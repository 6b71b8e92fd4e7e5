// Data: the workspace of the tree algorithms, sized once from the model.
#include "clusterdyn/data.hpp"

namespace clusterdyn {

Data::Data(const Model& m, bool denseMatrices) : model(&m) {
  const int n = m.nbodies;
  liMi.resize(n);
  oMi.resize(n);
  v.assign(n, Motion::Zero());
  a.assign(n, Motion::Zero());
  c.assign(n, Motion::Zero());
  f.assign(n, Force::Zero());
  a_gf.assign(n, Motion::Zero());
  IA.assign(n, Mat6::Zero());
  pA.assign(n, Force::Zero());
  U.resize(n);
  Dinv.resize(n);
  u.resize(n);
  for (int i = 0; i < n; ++i) {
    U[i].setZero(6, m.nvs[i]);
    Dinv[i].setZero(m.nvs[i], m.nvs[i]);
    u[i].setZero(m.nvs[i]);
  }
  Ycrb.assign(n, SpatialInertia());
  tau.setZero(m.nv);
  ddq.setZero(m.nv);
  nle.setZero(m.nv);
  if (m.hasJointDynamics()) tauApplied.setZero(m.nv);
  if (denseMatrices) M.setZero(m.nv, m.nv);
  J.setZero(6, m.nv);
  lastError[0] = '\0';
}

}  // namespace clusterdyn
