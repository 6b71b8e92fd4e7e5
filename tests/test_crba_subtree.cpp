// CRBA by subtree blocks (src/tree/crba.cpp: a floating root, then 1-dof bodies in depth-first
// order) against the body-by-body path, which crba takes for the same tree numbered breadth
// first, and against RNEA columns.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "clusterdyn/crba.hpp"
#include "clusterdyn/rnea.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
using namespace clusterdyn::test;

namespace {

/// A floating base and 1-dof joints (revolute, half of them about +-e_x, e_y or e_z, and
/// prismatic), numbered depth first as randomTreeModel does.
Model subtreeModel(std::mt19937_64& rng, int nbodies) {
  RandomModelOptions options;
  options.nbodies = nbodies;
  options.floatingBase = true;
  options.sphericalWeight = options.planarWeight = 0.0;
  Model m = randomTreeModel(rng, options);
  std::uniform_int_distribution<int> axis(0, 2);
  for (int i = 1; i < m.nbodies; ++i) {
    if (m.joints[i].type != JointType::Revolute || i % 2 == 1) continue;
    Vec3 e = Vec3::Zero();
    e[axis(rng)] = i % 4 == 0 ? -1.0 : 1.0;
    m.joints[i] = Joint::revolute(e);
    if (i % 3 != 0) m.jointPlacement[i].R.setIdentity();
  }
  m.finalize();
  return m;
}

/// The same tree numbered breadth first (body `order[b]` of m becomes body b); frames dropped.
Model breadthFirst(const Model& m, std::vector<int>& order) {
  order = {0};
  for (size_t k = 0; k < order.size(); ++k)
    for (int c : m.children[order[k]]) order.push_back(c);
  std::vector<int> newIndex(m.nbodies);
  for (int b = 0; b < m.nbodies; ++b) newIndex[order[b]] = b;
  Model r = m;
  r.frames.clear();
  for (int b = 0; b < m.nbodies; ++b) {
    const int o = order[b];
    r.parent[b] = m.parent[o] < 0 ? -1 : newIndex[m.parent[o]];
    r.joints[b] = m.joints[o];
    r.jointPlacement[b] = m.jointPlacement[o];
    r.inertias[b] = m.inertias[o];
    r.bodyNames[b] = m.bodyNames[o];
    r.jointNames[b] = m.jointNames[o];
  }
  r.lowerPositionLimit.resize(0);
  r.upperPositionLimit.resize(0);
  r.velocityLimit.resize(0);
  r.effortLimit.resize(0);
  r.finalize();
  return r;
}

/// True when some body's parent is not on the path to the body before it.
bool depthFirst(const Model& m) {
  for (int i = 1; i < m.nbodies; ++i) {
    int j = i - 1;
    while (j > m.parent[i]) j = m.parent[j];
    if (j != m.parent[i]) return false;
  }
  return true;
}

}  // namespace

TEST(CrbaSubtree, MatchesBodyByBodyPathAndRneaColumns) {
  std::mt19937_64 rng(29);
  int compared = 0;
  for (int trial = 0; trial < 16; ++trial) {
    const Model model = subtreeModel(rng, 4 + trial % 9);
    ASSERT_TRUE(depthFirst(model));
    std::vector<int> order;
    const Model bfs = breadthFirst(model, order);
    const bool reordered = !depthFirst(bfs);
    compared += reordered;
    Data data(model), bfsData(bfs);
    for (int s = 0; s < 3; ++s) {
      const RandomState st = randomState(model, rng);
      ASSERT_EQ(crba(model, data, st.q), Status::Ok) << data.errorMessage();
      // The same configuration in the breadth-first numbering.
      VecX qb(bfs.nq);
      for (int b = 0; b < bfs.nbodies; ++b)
        qb.segment(bfs.idx_q[b], bfs.nqs[b]) = st.q.segment(model.idx_q[order[b]], bfs.nqs[b]);
      ASSERT_EQ(crba(bfs, bfsData, qb), Status::Ok) << bfsData.errorMessage();
      std::vector<int> dof(bfs.nv);  // dof of bfs -> dof of model
      for (int b = 0; b < bfs.nbodies; ++b)
        for (int k = 0; k < bfs.nvs[b]; ++k) dof[bfs.idx_v[b] + k] = model.idx_v[order[b]] + k;
      MatX Mb(model.nv, model.nv);
      for (int r = 0; r < bfs.nv; ++r)
        for (int c = 0; c < bfs.nv; ++c) Mb(dof[r], dof[c]) = bfsData.M(r, c);
      EXPECT_TRUE(isClose(data.M, Mb, 1e-12));
      for (int r = 0; r < model.nv; ++r)
        for (int c = 0; c < r; ++c) EXPECT_EQ(data.M(r, c), data.M(c, r)) << r << " " << c;
      // Independent oracle: column j of M is rnea(q, 0, e_j) - rnea(q, 0, 0).
      const VecX zero = VecX::Zero(model.nv);
      ASSERT_EQ(rnea(model, data, st.q, zero, zero), Status::Ok);
      const VecX g = data.tau;
      MatX Mrnea(model.nv, model.nv);
      for (int j = 0; j < model.nv; ++j) {
        ASSERT_EQ(rnea(model, data, st.q, zero, VecX::Unit(model.nv, j)), Status::Ok);
        Mrnea.col(j) = data.tau - g;
      }
      ASSERT_EQ(crba(model, data, st.q), Status::Ok);
      EXPECT_TRUE(isClose(data.M, Mrnea, 1e-10));
    }
  }
  EXPECT_GE(compared, 8) << "too few trees change order breadth first";
}

TEST(CrbaSubtree, RepeatedCallsAndOtherWorkspaceContents) {
  // Pass 1 leaves subtree ends in M's diagonal and pass 2 keeps forces in M's first columns:
  // whatever M held before (another model's state, garbage) must not matter.
  std::mt19937_64 rng(31);
  const Model model = subtreeModel(rng, 10);
  Data data(model), fresh(model);
  const RandomState a = randomState(model, rng), b = randomState(model, rng);
  ASSERT_EQ(crba(model, data, a.q), Status::Ok);
  data.M.setConstant(1e3);
  data.M(0, 0) = -7.0;
  for (int i = 0; i < model.nv; ++i) data.M(i, i) = 3.5;
  ASSERT_EQ(crba(model, data, b.q), Status::Ok);
  ASSERT_EQ(crba(model, fresh, b.q), Status::Ok);
  // Entries between bodies on different branches are zero only if never written: compare the
  // whole matrix with a fresh workspace's, but only where the structure allows writes.
  for (int r = 0; r < model.nv; ++r)
    for (int c = 0; c < model.nv; ++c) {
      const int br = model.velocityOwner[r], bc = model.velocityOwner[c];
      bool related = false;
      for (int j = std::max(br, bc); j >= 0; j = model.parent[j]) related |= j == std::min(br, bc);
      if (related) EXPECT_EQ(data.M(r, c), fresh.M(r, c)) << r << " " << c;
    }
}
