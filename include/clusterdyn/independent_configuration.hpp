// Operations on the independent positions y of a cluster model (quaternion-aware), the
// counterparts of configuration.hpp's integrate / difference for y (size nyq) and its tangent
// y_dot (size ny). y holds, cluster by cluster, the positions of the floating base, of every
// joint outside loops and of the joints marked independent inside loop clusters, each joint as a
// whole: a spherical joint's unit quaternion (x, y, z, w) in y and its 3 body-frame angular
// velocities in y_dot (docs/frames-and-coordinates.md, "Spanning q versus independent y").
#pragma once

#include "clusterdyn/cluster_model.hpp"
#include "clusterdyn/data.hpp"
#include "clusterdyn/kinematics.hpp"
#include "clusterdyn/status.hpp"

namespace clusterdyn {

/// y (+) y_dot dt into out (size nyq; may be y itself): each independent joint moved by its own
/// exponential map, as integrate(treeModel, q, v, dt) moves it in q (body-frame rotation for
/// spherical / floating / planar joints, additive for 1-dof joints). No heap allocation.
/// InvalidSize when y, out are not of size nyq or y_dot not of size ny.
Status integrateIndependent(const ClusterModel& model, ConstVecRef y, ConstVecRef ydot, double dt,
                            Eigen::Ref<VecX> out);

/// y1 (-) y0 into out (size ny): the tangent with integrateIndependent(y0, out, 1) = y1
/// (body-frame logarithm for quaternion and planar joints, rotations of angle < pi). No heap
/// allocation. InvalidSize when y0, y1 are not of size nyq or out not of size ny.
Status differenceIndependent(const ClusterModel& model, ConstVecRef y0, ConstVecRef y1,
                             Eigen::Ref<VecX> out);

/// Ok when y (size nyq) is finite and every quaternion in it (an independent spherical or
/// floating joint) has norm 1 within 1e-6, as validateConfiguration checks q; else InvalidSize,
/// NonFinite or NotUnitQuaternion with a message in data naming `what`, the joint and its
/// entries of y. No heap allocation.
Status validateIndependentConfiguration(const ClusterModel& model, Data& data, ConstVecRef y,
                                        const char* what = "y");

}  // namespace clusterdyn
