// ConstraintData: the per-thread workspace of a ConstraintSet, with the structure of the
// constraint-space propagation (which rows are active below each cluster) fixed once.
#include <algorithm>

#include "clusterdyn/constraints.hpp"

namespace clusterdyn {

ConstraintData::ConstraintData(const ClusterModel& m, const ConstraintSet& s) : model(&m), set(&s) {
  if (&s.model() != &m)
    throw ModelError("ConstraintData: the constraint set was made for another model");
  const int mrows = s.rows(), ny = m.ny, ncl = static_cast<int>(m.clusters.size());
  delassus.setZero(mrows, mrows);
  dampedInverse.setZero(mrows, mrows);
  lambda.setZero(mrows);
  rowAcceleration.setZero(mrows);
  desired.setZero(mrows);
  phi.setZero(mrows);
  jacobian.setZero(mrows, ny);
  gamma.setZero(mrows);
  kprime.setZero(mrows);
  z.setZero(mrows);
  lambdaPrev.setZero(mrows);
  residual.setZero(mrows);
  step.setZero(mrows);
  du.setZero(std::max(ny, m.treeModel.nv));
  work.setZero(std::max(mrows, ny), std::max(mrows, ny));
  jacobianH.setZero(mrows, ny);
  tauFree.setZero(ny);
  yddFree.setZero(ny);
  llt.compute(MatX::Identity(mrows, mrows));
  lltH.compute(MatX::Identity(ny, ny));
  dp.assign(m.treeModel.nbodies, Force::Zero());

  // Attachments: one per constrained body side.
  for (int j = 0; j < s.size(); ++j) {
    const RigidConstraint& c = s.constraints()[j];
    for (int side = 0; side < 2; ++side) {
      const int b = side == 0 ? c.body1 : c.body2;
      if (b < 0) continue;
      Attachment a;
      a.constraint = j;
      a.side = side;
      a.body = b;
      a.cluster = m.bodyCluster[b];
      a.row0 = s.rowOffset(j);
      a.rows = c.rows();
      attachments.push_back(a);
    }
  }

  // Active rows below each cluster, leaf clusters first (children have larger indices).
  // inside[j]: the clusters holding constraint j's attachments (to test completeness).
  std::vector<std::vector<int>> clustersOf(s.size());
  for (const Attachment& a : attachments) clustersOf[a.constraint].push_back(a.cluster);
  auto below = [&](int c, int k) {  // c == k or a descendant of k
    for (; c >= 0; c = m.clusters[c].parent)
      if (c == k) return true;
    return false;
  };
  totalRows = mrows;
  clusterRows.resize(ncl);
  for (int k = ncl - 1; k >= 0; --k) {
    ClusterRows& R = clusterRows[k];
    const Cluster& c = m.clusters[k];
    std::vector<int> rows;
    for (int i = 0; i < static_cast<int>(attachments.size()); ++i)
      if (attachments[i].cluster == k) {
        R.attachments.push_back(i);
        for (int r = 0; r < attachments[i].rows; ++r) rows.push_back(attachments[i].row0 + r);
      }
    for (int ch : c.children) {
      if (clusterRows[ch].rows.empty()) continue;
      bool compressed = false;
      for (int v = 0; v < static_cast<int>(compressions.size()); ++v)
        if (compressions[v].cluster == ch) {
          R.virtuals.push_back(v);
          for (int r = 0; r < 6; ++r) rows.push_back(compressions[v].v0 + r);
          compressed = true;
        }
      if (compressed) continue;
      R.children.push_back(ch);
      rows.insert(rows.end(), clusterRows[ch].rows.begin(), clusterRows[ch].rows.end());
    }
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    R.rows = rows;
    auto pos = [&](int r) {
      return static_cast<int>(std::lower_bound(rows.begin(), rows.end(), r) - rows.begin());
    };
    for (int i : R.attachments) R.attachPos.push_back(pos(attachments[i].row0));
    for (int ch : R.children) {
      std::vector<int> p;
      for (int r : clusterRows[ch].rows) p.push_back(pos(r));
      R.childPos.push_back(p);
    }
    for (int v : R.virtuals) R.virtualPos.push_back(pos(compressions[v].v0));
    const int n = static_cast<int>(rows.size());
    R.T.setZero(n, 6);
    R.L.setZero(n, n);
    R.M.setZero(n, 6 * c.nbodies);
    R.MS.setZero(n, c.ny);
    R.MSD.setZero(n, c.ny);
    // Compress above k when more than 6 rows leave it and every constraint they carry is
    // complete inside its subtree.
    bool complete = c.outputBody >= 0 && n > 6;
    for (int i = 0; complete && i < static_cast<int>(attachments.size()); ++i) {
      const int j = attachments[i].constraint;
      bool anyIn = false, allIn = true;
      for (int cl : clustersOf[j]) {
        if (below(cl, k))
          anyIn = true;
        else
          allIn = false;
      }
      if (anyIn && !allIn) complete = false;
    }
    if (complete) {
      Compression z;
      z.cluster = k;
      z.body = c.outputBody;
      z.v0 = totalRows;
      totalRows += 6;
      compressions.push_back(z);
    }
  }
  full.setZero(totalRows, totalRows);
  for (int k = 0; k < ncl; ++k)
    (clusterRows[k].rows.empty() ? freeOrder : supportOrder).push_back(k);

  // Branch-sparsity parents of the independent coordinates (L^T D L baseline): dense inside a
  // cluster, the last coordinate of the parent cluster before the first of a cluster.
  ltlParent.assign(ny, -1);
  for (const Cluster& c : m.clusters) {
    int p = -1;
    for (int a = c.parent; a >= 0 && p < 0; a = m.clusters[a].parent)
      if (m.clusters[a].ny > 0) p = m.clusters[a].y0 + m.clusters[a].ny - 1;
    for (int i = 0; i < c.ny; ++i) ltlParent[c.y0 + i] = i == 0 ? p : c.y0 + i - 1;
  }
}

}  // namespace clusterdyn
