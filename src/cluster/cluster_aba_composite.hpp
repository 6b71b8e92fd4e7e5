// Pass 2 of CE-ABA in composite-inertia form for loop clusters with a multi-dof joint
// (cluster_aba_composite.cpp; ClusterWorkspace::Composite).
#pragma once

#include "cluster/cluster_workspace.hpp"
#include "clusterdyn/cluster_data.hpp"
#include "clusterdyn/cluster_model.hpp"

namespace clusterdyn::detail {

/// Sets ClusterWorkspace::composite of constrained cluster k (by the ClusterData constructor,
/// after the column pattern and the idle columns): active for an implicit cluster with more
/// than three independent coordinates, a column pattern, no idle column and a multi-dof joint,
/// with its storage sized.
void setCompositeForm(const ClusterModel& m, int k, ClusterWorkspace& w);

/// The per-body part of pass 2 (articulatedSparse) for a cluster whose composite form is
/// active: D (lower triangle), u -= S^T pA (w.u holds tau_y on entry), U^T c (w.Utc), Ubar,
/// and adds sum_b X_b^T IA_b X_b to IAo (when the cluster has an output body) and
/// sum_b X_b^T (pA_b + IA_b c_b) to po. Leaves w.U unwritten.
void compositeArticulatedTerms(const ClusterModel& cm, ClusterData& data, int k, Mat6& IAo,
                               Force& po);

}  // namespace clusterdyn::detail
