// Internal steps of the cluster-tree derivatives (cluster_derivatives*.cpp).
#pragma once

#include "cluster/cluster_kinematics.hpp"
#include "clusterdyn/cluster_derivatives.hpp"

namespace clusterdyn::detail {

/// The spanning-tree RNEA derivative passes (Carpentier & Mansard 2018; D1-D10) at (q, v, a)
/// into dd.tree (dtau_dq, dtau_dv, dtau_da, tau), with the placements of data.treeData
/// (placements: computed here, else reused). Without external forces the rotors run in their
/// output body's frame (R1, R2) and the other bodies carry their rotors' inertia (rneaInertias):
/// the same matrices, without the rotors' own inertia and Coriolis matrices.
void spanningDerivativePasses(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd,
                              ConstVecRef q, const double* v, const double* a, const Force* fext,
                              bool placements);

/// A model without loop joints (G constant, dd.Gentries and dd.dofEntry* current): the same
/// forward pass, and a backward pass over the clusters that folds each cluster's rows with G
/// (eq. F1-F3) and writes dd.dtau_dy = G^T dtau/dq G, dd.dtau_dydot = G^T dtau/dv G, dd.H =
/// G^T M G and dd.tree.tau, without the spanning nv x nv matrices.
void foldedDerivativePasses(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd,
                            ConstVecRef q, const double* v, const double* a, const Force* fext,
                            bool placements);

/// Joint dynamics (armature A, passive forces tau_p) after foldedDerivativePasses (G constant;
/// with G varying, addJointDynamicsDerivatives on the spanning tree, eq. J1): dd.tree.tau += A a -
/// tau_p and each cluster's diagonal block of dd.dtau_dy, dd.dtau_dydot, dd.H += G_k^T (-d tau_p
/// / dq, -d tau_p / dv, A)_k G_k (eq. J2; the partials are block diagonal per cluster).
void foldJointDynamics(const ClusterModel& cm, ConstVecRef q, const double* v,
                       ClusterDerivativeData& dd);

/// Loop cluster k (after the spanning-tree derivative pass): its constraint rows as world
/// wrenches (dd.ow, eq. C1) and, over its selected rows, d Psi / dq, d Phi / dq, d Phi / dv
/// (dd.Psiq, dd.Phiq, dd.Phiv: selected rows x the cluster's spanning velocities, eq. C2, C3).
/// a0: the gravity offset of the root's acceleration.
void loopRowDerivatives(const ClusterModel& cm, const ClusterData& data, ClusterDerivativeData& dd,
                        int k, const Motion& a0);

/// Loop cluster k: the dependent rows of dd.dv_dy, dd.da_dy, dd.da_dyd over its columns
/// (eq. C4-C6), from loopRowDerivatives and the LU factors of Kd.
void loopVelocityTerms(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd, int k);

/// Loop cluster k: adds (dG / dy)^T tau (eq. C7, C8) to its diagonal block of dd.dtau_dy.
void loopGdotTerm(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd, int k);

/// The H^-1 recursion (eq. C11-C13) into dd.Hinv from the placements (data.treeData.oMi of
/// every body) and G of every cluster left by a cluster velocity pass at q.
Status clusterMinversePasses(const ClusterModel& cm, ClusterData& data, ClusterDerivativeData& dd);

/// The carrier bodies of the H^-1 recursion (dd.mCarrier) and the paths of the independent
/// velocities on the cluster tree (dd.hPath, hStart, hOrder, hCommon) and the sizes of dd.hL,
/// dd.hW: at construction.
void initBranchFactor(const ClusterModel& cm, ClusterDerivativeData& dd);

/// dd.Hinv = H^-1 from dd.H by its branch-sparse factor H = L^T L (eq. C14-C16). Returns -1, or
/// when H is not positive definite to working precision (a pivot <= 0, NaN, or below
/// kSingularPivot of H's largest diagonal entry) the independent velocity of that pivot, with
/// *ratio the failed test (PivotText; dd.Hinv then unspecified).
int branchSparseInverse(ClusterDerivativeData& dd, double* ratio);

}  // namespace clusterdyn::detail
