// Composite-rigid-body algorithm (Featherstone 2008, Table 6.2) in body coordinates: the force
// F = I^c_i S_i is carried from body i to each ancestor j by the joint force transforms, and
// H(j, i) = S_j^T F there. S_j is constant in body coordinates, so for a revolute joint about a
// coordinate axis S_j^T F is one coefficient of F and I^c_i S_i is one column of I^c_i: the
// per-pair cost is one force transform, and no body needs its world pose. With a floating root
// and 1-dof bodies numbered depth first (the URDF robots), each subtree's dofs are contiguous and
// a body carries the forces of its whole subtree at once: one transform, many independent
// columns, no per-pair walk up the tree.
#include "clusterdyn/crba.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "tree/axis_transforms.hpp"
#include "tree/subtree_blocks.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {
namespace {

using detail::axisJointTransform;
using detail::ForceTransport;
using detail::writeRootInertia;

/// H(j, i) = S_j^T F for every ancestor j of a 1-dof body i, with F = I^c_i S_i carried from
/// frame to frame; entries go to column i (contiguous) and, mirrored, to row i.
void fillAncestorEntries(const Model& model, Data& data, int i, Force F) {
  // Raw pointers: Eigen's packet stores may alias anything, which would reload every
  // std::vector's data pointer after each store.
  const int* const parent = model.parent.data();
  const int* const idxV = model.idx_v.data();
  const int* const axisRotation = model.axisRotation.data();
  const Joint* const joints = model.joints.data();
  const Transform* const liMi = data.liMi.data();
  const int iv = idxV[i];
  const Eigen::Index ld = data.M.outerStride();
  double* const Md = data.M.data();
  double* const col = Md + iv * ld;  // column iv
  for (int j = i, p = parent[i]; p >= 0; j = p, p = parent[p]) {
    F = detail::forceInParentFrame(axisRotation[j], liMi[j], F);
    const Joint& joint = joints[p];
    const int jv = idxV[p];
    if (joint.type == JointType::Revolute && joint.alignedAxis >= 0) {
      const double x = joint.alignedSign * F[joint.alignedAxis];
      col[jv] = x;
      Md[jv * ld + iv] = x;                          // M(iv, jv)
    } else if (joint.type == JointType::Floating) {  // S = 1
      Vec6::Map(col + jv) = F;
      double* row = Md + jv * ld + iv;  // M(iv, jv)
      row[0] = F[0], row[ld] = F[1], row[2 * ld] = F[2];
      row[3 * ld] = F[3], row[4 * ld] = F[4], row[5 * ld] = F[5];
    } else {
      detail::projectOnSubspace(joint, F, col + jv);
      for (int r = 0; r < joint.nv; ++r) Md[(jv + r) * ld + iv] = col[jv + r];
    }
  }
}

/// The same for a body with k > 1 dofs (F is 6 x k).
template <typename ForceCols>
void fillAncestorBlocks(const Model& model, Data& data, int i, ForceCols& F) {
  MatX& M = data.M;
  const int iv = model.idx_v[i], k = model.nvs[i];
  for (int j = i; model.parent[j] >= 0;) {
    for (int c = 0; c < k; ++c) F.col(c) = detail::forceInParentFrame(model, data, j, F.col(c));
    j = model.parent[j];
    const int jv = model.idx_v[j], kj = model.nvs[j];
    for (int c = 0; c < k; ++c) {
      double* col = &M(0, iv + c);
      detail::projectOnSubspace(model.joints[j], F.col(c), col + jv);
      for (int r = 0; r < kj; ++r) M(iv + c, jv + r) = col[jv + r];
    }
  }
}

/// Subtree blocks (a floating root, then 1-dof bodies in depth-first order): the force
/// F_c = I^c_c S_c of column c is kept at M(0..5, c), where it ends as H(root, c). At body i,
/// for every column c of its subtree [c0, c1) (F_c in body i's coordinates), H(i, c) =
/// H(c, i) = S_i^T F_c, then F_c <- X^* F_c into the parent's coordinates (Table 6.2's inner
/// loop, one transform for all of the subtree).
template <int A>
inline void projectAndTransport(const Joint& joint, const Transform& X, double* Md, Eigen::Index ld,
                                int iv, int c0, int c1) {
  const ForceTransport<A> transport(X);
  double* const rowI = Md + iv;       // M(iv, c) = rowI[c * ld]
  double* const colI = Md + iv * ld;  // M(c, iv) = colI[c]
  if (joint.type == JointType::Revolute && joint.alignedAxis >= 0) {
    const int a = joint.alignedAxis;
    const double s = joint.alignedSign;
    for (int c = c0; c < c1; ++c) {
      double* const f = Md + c * ld;
      const double x = s * f[a];
      transport(f);
      rowI[c * ld] = colI[c] = x;
    }
  } else {
    for (int c = c0; c < c1; ++c) {
      double* const f = Md + c * ld;
      double x[6];  // S^T f writes nv values (1 here: subtree blocks have 1-dof bodies)
      x[0] = 0.0;
      detail::projectOnSubspace(joint, Force::Map(f), x);
      transport(f);
      rowI[c * ld] = colI[c] = x[0];
    }
  }
}

/// One body of pass 2 by subtree blocks, for X = liMi[i] with X.R a rotation about axis A
/// (A = -1: a general rotation): F_i = I^c_i S_i to M(0..5, v_i), the subtree's entries of
/// H and its forces carried to the parent, then I^c_parent += X^T I^c_i X (Table 6.2).
template <int A>
inline void subtreeStep(const Model& model, Data& data, int i, double* Md, Eigen::Index ld,
                        int end) {
  const Joint& joint = model.joints[i];
  const Transform& X = data.liMi[i];
  const int iv = model.idx_v[i];
  const SpatialInertia& Ic = data.Ycrb[i];
  Force::Map(Md + iv * ld) = detail::inertiaTimesAxis(joint, Ic);
  projectAndTransport<A>(joint, X, Md, ld, iv, iv, end);
  SpatialInertia& Ip = data.Ycrb[model.parent[i]];
  if constexpr (A >= 0)
    Ip += detail::transformedAboutAxis<A>(Ic, X);
  else
    Ip += Ic.transformedBy(X);
}

/// Pass 2 body by body (any tree): leaves to root, H(i, i) and H(ancestors, i) from
/// F = I^c_i S_i, then I^c_parent += X^T I^c_i X (Table 6.2).
void crbaBodyByBody(const Model& model, Data& data) {
  const int n = model.nbodies;
  MatX& M = data.M;
  for (int i = n - 1; i >= 0; --i) {
    const int iv = model.idx_v[i], k = model.nvs[i];
    const Joint& joint = model.joints[i];
    const SpatialInertia& Ic = data.Ycrb[i];
    if (k == 1) {
      const Force F = detail::inertiaTimesAxis(joint, Ic);
      detail::projectOnSubspace(joint, F, &M(iv, iv));
      fillAncestorEntries(model, data, i, F);
    } else if (k > 1) {
      Eigen::Matrix<double, 6, Eigen::Dynamic, 0, 6, 6> F(6, k);
      if (joint.type == JointType::Floating && model.parent[i] < 0) {
        writeRootInertia(Ic, M, iv);  // S = 1 and no ancestors: H(i, i) = I^c_i
        continue;
      }
      if (joint.type == JointType::Floating) {
        F = Ic.matrix();  // S = 1
        M.block<6, 6>(iv, iv) = F;
      } else {
        for (int c = 0; c < k; ++c) F.col(c) = Ic * Motion(joint.S.col(c));
        M.block(iv, iv, k, k).noalias() = joint.S.transpose() * F;
      }
      for (int r = 1; r < k; ++r)  // exact symmetry of multi-dof diagonal blocks
        for (int c = 0; c < r; ++c) {
          const double m = 0.5 * (M(iv + r, iv + c) + M(iv + c, iv + r));
          M(iv + r, iv + c) = M(iv + c, iv + r) = m;
        }
      fillAncestorBlocks(model, data, i, F);
    }
    const int p = model.parent[i];
    if (p < 0) continue;
    data.Ycrb[p] += detail::inertiaInParentFrame(model, data, i, Ic);
  }
}

}  // namespace

Status crba(const Model& model, Data& data, ConstVecRef q) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  if (data.M.rows() != model.nv)
    return detail::fail(data, Status::InvalidArgument,
                        "crba: the workspace was created without dense matrices (no M)");
  const int n = model.nbodies;
  // Pass 1: joint transforms; composite inertias start as the body inertias.
  // With a floating root and 1-dof bodies in depth-first order, pass 2 carries subtree blocks;
  // pass 1 checks the order (the parent of each body is on the path to the body before it) and
  // leaves the end of each subtree's dofs in its diagonal entry of M, written in pass 2.
  const int* const axisRotation = model.axisRotation.data();
  const int* const parent = model.parent.data();
  const int* const idxV = model.idx_v.data();
  MatX& M = data.M;
  double* const Md = M.data();
  const Eigen::Index ld = M.outerStride();
  bool subtreeBlocks = n >= 2 && parent[0] < 0 && model.joints[0].type == JointType::Floating;
  for (int i = 0; i < n; ++i) {
    if (axisRotation[i] >= 0)
      axisJointTransform(model, data, i, q.data());
    else
      detail::localPlacementStep(model, data, i, q);
    if (!subtreeBlocks || i == 0) continue;
    const int p = parent[i];
    int j = i - 1;
    for (; j > p; j = parent[j]) Md[idxV[j] * (ld + 1)] = idxV[i];  // subtree of j ends at i
    subtreeBlocks = p >= 0 && j == p && model.nvs[i] == 1;
  }
  if (subtreeBlocks)
    for (int j = n - 1; j > 0; j = parent[j]) Md[idxV[j] * (ld + 1)] = model.nv;
  std::copy(model.inertias.begin(), model.inertias.end(), data.Ycrb.begin());
  if (subtreeBlocks) {
    // Pass 2 by subtree blocks (Table 6.2 with the inner loop over all descendants at once).
    for (int i = n - 1; i > 0; --i) {
      const int end = static_cast<int>(Md[idxV[i] * (ld + 1)]);  // left by pass 1
      switch (axisRotation[i]) {
        case 0:
          subtreeStep<0>(model, data, i, Md, ld, end);
          break;
        case 1:
          subtreeStep<1>(model, data, i, Md, ld, end);
          break;
        case 2:
          subtreeStep<2>(model, data, i, Md, ld, end);
          break;
        default:
          subtreeStep<-1>(model, data, i, Md, ld, end);
      }
    }
    writeRootInertia(data.Ycrb[0], M, 0);
    M.bottomLeftCorner(model.nv - 6, 6) = M.topRightCorner(6, model.nv - 6).transpose();
  } else {
    crbaBodyByBody(model, data);
  }
  if (model.hasArmature()) M.diagonal() += model.armature;  // joint-space rotor inertia (MJCF)
  detail::ok(data);
  if (detail::upperTriangleFinite(M)) return Status::Ok;
  return detail::nonFiniteOutput(data, "crba: M", {{"q", detail::maxAbs(q), 2}});
}

}  // namespace clusterdyn
