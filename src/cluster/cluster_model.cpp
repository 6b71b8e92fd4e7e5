// Body renumbering and human-readable views of the cluster tree.
#include "clusterdyn/cluster_model.hpp"

#include <sstream>

namespace clusterdyn {

Model permuteBodies(const Model& m, const std::vector<int>& order) {
  const int n = m.nbodies;
  std::vector<int> newIndex(n, -1);
  for (int i = 0; i < n; ++i) newIndex[order[i]] = i;
  Model out;
  out.name = m.name;
  out.gravity = m.gravity;
  out.rootLink = m.rootLink;
  std::vector<double> lower, upper, vel, eff, arm, damp, stiff, spring;
  for (int i = 0; i < n; ++i) {
    const int o = order[i];
    const int p = m.parent[o];
    out.parent.push_back(p >= 0 ? newIndex[p] : -1);
    if (out.parent.back() >= i)
      throw ModelError("permuteBodies: order does not keep parents first");
    out.joints.push_back(m.joints[o]);
    out.jointPlacement.push_back(m.jointPlacement[o]);
    out.inertias.push_back(m.inertias[o]);
    out.bodyNames.push_back(m.bodyNames[o]);
    out.jointNames.push_back(m.jointNames[o]);
    for (int k = 0; k < m.nqs[o]; ++k) {
      lower.push_back(m.lowerPositionLimit[m.idx_q[o] + k]);
      upper.push_back(m.upperPositionLimit[m.idx_q[o] + k]);
      if (m.hasPassiveForces()) spring.push_back(m.springPosition[m.idx_q[o] + k]);
    }
    for (int k = 0; k < m.nvs[o]; ++k) {
      vel.push_back(m.velocityLimit[m.idx_v[o] + k]);
      eff.push_back(m.effortLimit[m.idx_v[o] + k]);
      if (m.hasArmature()) arm.push_back(m.armature[m.idx_v[o] + k]);
      if (m.hasPassiveForces()) {
        damp.push_back(m.damping[m.idx_v[o] + k]);
        stiff.push_back(m.stiffness[m.idx_v[o] + k]);
      }
    }
  }
  out.frames = m.frames;
  for (Frame& f : out.frames)
    if (f.body >= 0) f.body = newIndex[f.body];
  out.lowerPositionLimit = Eigen::Map<VecX>(lower.data(), lower.size());
  out.upperPositionLimit = Eigen::Map<VecX>(upper.data(), upper.size());
  out.velocityLimit = Eigen::Map<VecX>(vel.data(), vel.size());
  out.effortLimit = Eigen::Map<VecX>(eff.data(), eff.size());
  out.armature = Eigen::Map<VecX>(arm.data(), arm.size());  // empty when m has none
  out.damping = Eigen::Map<VecX>(damp.data(), damp.size());
  out.stiffness = Eigen::Map<VecX>(stiff.data(), stiff.size());
  out.springPosition = Eigen::Map<VecX>(spring.data(), spring.size());
  out.ballHinges = m.ballHinges;  // indices renumbered by finalize() (joints by name)
  out.finalize();
  return out;
}

std::string describeClusterTree(const ClusterModel& cm) {
  const Model& t = cm.treeModel;
  auto bodyOrWorld = [&](int b) { return b >= 0 ? t.bodyNames[b] : std::string("world"); };
  std::ostringstream os;
  os << "cluster tree of '" << t.name << "': " << cm.clusters.size() << " clusters, " << t.nbodies
     << " bodies, spanning nq = " << t.nq << ", nv = " << t.nv << ", independent nq = " << cm.nyq
     << ", nv = " << cm.ny << ", " << cm.loops.size() << " loop joints, " << cm.relations.size()
     << " explicit relations\n";
  for (size_t k = 0; k < cm.clusters.size(); ++k) {
    const Cluster& c = cm.clusters[k];
    os << "  cluster " << k << " '" << c.name << "': parent "
       << (c.parent >= 0 ? std::to_string(c.parent) : std::string("world")) << ", output body "
       << (c.outputBody >= 0 ? t.bodyNames[c.outputBody] : std::string("world")) << ", "
       << c.nbodies << " bodies, nv " << c.nv << " -> ny " << c.ny;
    if (c.constrained())
      os << (c.implicit() ? ", implicit" : ", explicit") << " (" << c.constraintRows
         << " constraint rows, " << c.selectedRows.size() << " independent)";
    os << "\n";
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
      bool indep = false;
      for (int iv : c.independent)
        if (t.velocityOwner[c.v0 + iv] == b) indep = true;
      os << "      body " << b << " " << t.bodyNames[b] << "  joint " << t.jointNames[b] << " ("
         << jointTypeName(t.joints[b].type) << (indep ? ", independent" : ", dependent") << ")\n";
    }
    for (int r : c.relations) os << "      relation " << cm.relations[r].name << "\n";
    for (int l : c.loops)
      os << "      loop " << cm.loops[l].name << " (" << jointTypeName(cm.loops[l].type) << ") "
         << bodyOrWorld(cm.loops[l].predecessorBody) << " -> "
         << bodyOrWorld(cm.loops[l].successorBody) << "\n";
  }
  return os.str();
}

std::string clusterTreeDot(const ClusterModel& cm) {
  const Model& t = cm.treeModel;
  auto esc = [](const std::string& in) {  // a Graphviz double-quoted string
    std::string out;
    for (char ch : in) {
      if (ch == '"' || ch == '\\') out += '\\';
      out += ch;
    }
    return out;
  };
  std::ostringstream os;
  os << "digraph \"" << esc(t.name) << "\" {\n  rankdir=TB;\n  node [shape=box, fontsize=10];\n";
  os << "  world [shape=doublecircle, label=\"world\"];\n";
  for (size_t k = 0; k < cm.clusters.size(); ++k) {
    const Cluster& c = cm.clusters[k];
    os << "  subgraph cluster_" << k << " {\n    label=\"" << esc(c.name) << " (ny " << c.ny
       << ")\";\n"
       << "    style="
       << (c.constrained() ? "\"rounded,filled\"; fillcolor=\"#eef4ff\"" : "rounded") << ";\n";
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
      os << "    b" << b << " [label=\"" << esc(t.bodyNames[b]) << "\"];\n";
    os << "  }\n";
  }
  for (int b = 0; b < t.nbodies; ++b)
    os << "  " << (t.parent[b] >= 0 ? "b" + std::to_string(t.parent[b]) : std::string("world"))
       << " -> b" << b << " [label=\"" << esc(t.jointNames[b]) << "\"];\n";
  auto node = [](int b) { return b >= 0 ? "b" + std::to_string(b) : std::string("world"); };
  for (const auto& l : cm.loops)
    os << "  " << node(l.predecessorBody) << " -> " << node(l.successorBody)
       << " [style=dashed, color=red, dir=none, label=\"loop " << esc(l.name) << "\"];\n";
  for (size_t r = 0; r < cm.relations.size(); ++r) {
    const ExplicitRelation& rel = cm.relations[r];
    if (rel.terms.size() == 2) {
      os << "  " << node(t.velocityOwner[rel.terms[0].first]) << " -> "
         << node(t.velocityOwner[rel.terms[1].first])
         << " [style=dashed, color=blue, dir=none, label=\"" << esc(rel.name) << "\"];\n";
      continue;
    }
    // Three or more joints (differentials, belts over several joints): a hub node joined to
    // the body of every joint in the relation.
    os << "  rel" << r << " [shape=point, color=blue, xlabel=\"" << esc(rel.name) << "\"];\n";
    for (const auto& term : rel.terms)
      os << "  rel" << r << " -> " << node(t.velocityOwner[term.first])
         << " [style=dashed, color=blue, dir=none];\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace clusterdyn
