// Cluster tree construction from a URDF+ description (Chignoli et al. 2023, §II-B, Fig. 4).
#include <Eigen/QR>
#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "cluster/cluster_builder_detail.hpp"
#include "cluster/cut_loops.hpp"
#include "cluster/multi_dof_joints.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/cluster_data.hpp"
#include "clusterdyn/cluster_model.hpp"
#include "clusterdyn/configuration.hpp"
#include "core/log.hpp"
#include "model/loop_coordinates.hpp"
#include "model/model_builder_detail.hpp"

namespace clusterdyn {
namespace {

/// A leaf rotor is axisymmetric when rotating its inertia about the joint axis changes it by at
/// most this much relative to mass + |Io| + |h|.
constexpr double kAxisymmetryTolerance = 1e-12;

/// Chord kinds before the bodies are renumbered (expressed with names).
struct ChordBodies {
  std::string what;  ///< "<coupling name=..>" etc. for messages
  std::string location;
  std::vector<int> bodies;  ///< bodies (original numbering) the chord puts in one cluster
};

int nearestCommonAncestor(const Model& m, int a, int b) {
  std::set<int> ancestors;
  for (int x = a; x >= 0; x = m.parent[x]) ancestors.insert(x);
  for (int x = b; x >= 0; x = m.parent[x])
    if (ancestors.count(x)) return x;
  return -1;
}

/// Bodies from b up to (excluding) ancestor c.
std::vector<int> pathTo(const Model& m, int b, int c) {
  std::vector<int> path;
  for (int x = b; x != c && x >= 0; x = m.parent[x]) path.push_back(x);
  return path;
}

struct LinkRef {
  int body = -1;
  Transform placement;
};

LinkRef linkRef(const Model& m, const std::string& link) {
  const int f = m.frameId(link);
  LinkRef r;
  if (f >= 0) {
    r.body = m.frames[f].body;
    r.placement = m.frames[f].placement;
  }
  return r;
}

struct UnionFind {
  std::vector<int> p;
  explicit UnionFind(int n) : p(n) { std::iota(p.begin(), p.end(), 0); }
  int find(int x) { return p[x] == x ? x : p[x] = find(p[x]); }
  void unite(int a, int b) { p[find(a)] = find(b); }
};

using detail::fail;

/// Coefficients of a coupling relation on the spanning velocities of `tree`:
/// sum_p r_p (sum over path C->A_p) - (sum over path C->B) = 0.
ExplicitRelation couplingRelation(const Model& tree, const UrdfDescription& urdf,
                                  const UrdfCoupling& c) {
  ExplicitRelation rel;
  rel.name = c.name;
  rel.location = urdf.where(c.line);
  const std::string elem = "<coupling name=\"" + c.name + "\">";
  std::vector<int> links;
  for (const auto& t : c.predecessors) links.push_back(linkRef(tree, t.link).body);
  const int succ = linkRef(tree, c.successor).body;
  int C = succ;
  for (int b : links) C = nearestCommonAncestor(tree, C, b);
  std::map<int, double> coeff;
  auto addPath = [&](int b, double r) {
    for (int x : pathTo(tree, b, C)) {
      if (tree.nvs[x] != 1)
        fail(rel.location, elem,
             "joint '" + tree.jointNames[x] + "' on the coupling path is of type " +
                 jointTypeName(tree.joints[x].type) + "; couplings act on 1-dof joints only");
      coeff[tree.idx_v[x]] += r;
    }
  };
  for (size_t p = 0; p < links.size(); ++p) addPath(links[p], c.predecessors[p].ratio);
  addPath(succ, -1.0);
  for (const auto& [iv, r] : coeff)
    if (r != 0.0) rel.terms.emplace_back(iv, r);
  if (rel.terms.empty())
    fail(rel.location, elem,
         "the coupling relates no joint velocities (its links are the same rigid body or the "
         "ratios cancel)");
  return rel;
}

LoopJoint makeLoop(const Model& tree, const UrdfDescription& urdf, const UrdfLoop& l) {
  LoopJoint lj;
  lj.name = l.name;
  lj.type = l.type;
  lj.location = urdf.where(l.line);
  const LinkRef p = linkRef(tree, l.predecessor), s = linkRef(tree, l.successor);
  lj.predecessorBody = p.body;
  lj.successorBody = s.body;
  lj.predecessorPlacement = p.placement * l.predecessorOrigin;
  lj.successorPlacement = s.placement * l.successorOrigin;
  lj.axis = l.axis;
  if (p.body == s.body)
    fail(lj.location, "<loop name=\"" + l.name + "\">",
         "predecessor '" + l.predecessor + "' and successor '" + l.successor +
             "' are the same rigid body; the loop closes nothing");
  // Orthonormal basis (a, t1, t2) around the axis.
  const Vec3 a = l.axis.norm() > 0 ? Vec3(l.axis.normalized()) : Vec3::UnitZ();
  const Vec3 helper = std::abs(a.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  const Vec3 t1 = (helper - helper.dot(a) * a).normalized();
  const Vec3 t2 = a.cross(t1);
  auto set = [](auto& T, std::initializer_list<Vec3> cols) {
    T.resize(3, static_cast<int>(cols.size()));
    int k = 0;
    for (const Vec3& c : cols) T.col(k++) = c;
  };
  const JointType t = l.type;
  if (t == JointType::Revolute) {
    set(lj.Trot, {t1, t2});
    set(lj.Tlin, {Vec3::UnitX(), Vec3::UnitY(), Vec3::UnitZ()});
  } else if (t == JointType::Prismatic) {
    set(lj.Trot, {Vec3::UnitX(), Vec3::UnitY(), Vec3::UnitZ()});
    set(lj.Tlin, {t1, t2});
  } else if (t == JointType::Planar) {
    set(lj.Trot, {t1, t2});
    set(lj.Tlin, {a});
  } else if (t == JointType::Spherical) {
    set(lj.Trot, {});
    set(lj.Tlin, {Vec3::UnitX(), Vec3::UnitY(), Vec3::UnitZ()});
  } else {  // fixed
    set(lj.Trot, {Vec3::UnitX(), Vec3::UnitY(), Vec3::UnitZ()});
    set(lj.Tlin, {Vec3::UnitX(), Vec3::UnitY(), Vec3::UnitZ()});
  }
  return lj;
}

// --- 1. Chords and the bodies each puts in one cluster (original numbering). ----------------

using JointsByName = std::map<std::string, const UrdfJoint*>;

/// One chord per coupling, uncut loop and mimic, with the spanning-tree bodies it puts in one
/// cluster. Rejects cycles among mimics (multi-dof joints: partitionCoordinates).
std::vector<ChordBodies> chordBodies(const Model& tree0, const UrdfDescription& urdf,
                                     const ModelOptions& options, const JointsByName& jointByName) {
  std::vector<ChordBodies> chords;
  // `ends` are bodies whose connecting paths the chord constrains; the cluster holds every body
  // on those paths below the ends' nearest common ancestor `C` (given explicitly for mimics).
  auto addChord = [&](const std::vector<int>& ends, const std::string& where,
                      const std::string& elem, int C = -2) {
    if (C == -2) {
      C = ends[0];
      for (int b : ends) C = nearestCommonAncestor(tree0, C, b);
    }
    ChordBodies cb;
    cb.what = elem;
    cb.location = where;
    for (int b : ends)
      for (int x : pathTo(tree0, b, C)) cb.bodies.push_back(x);
    if (cb.bodies.empty()) fail(where, elem, "its links belong to the same rigid body");
    chords.push_back(cb);
  };
  for (const auto& c : urdf.couplings) {
    std::vector<int> ends;
    for (const auto& t : c.predecessors) ends.push_back(linkRef(tree0, t.link).body);
    ends.push_back(linkRef(tree0, c.successor).body);
    addChord(ends, urdf.where(c.line), "<coupling name=\"" + c.name + "\">");
  }
  for (const auto& l : urdf.loops)
    if (!detail::isCutLoop(l, options))
      addChord({linkRef(tree0, l.predecessor).body, linkRef(tree0, l.successor).body},
               urdf.where(l.line), "<loop name=\"" + l.name + "\">");
  // Mimic chords; reject cycles among mimics.
  for (const auto& j : urdf.joints) {
    if (!j.mimic.present) continue;
    const std::string elem = "<joint name=\"" + j.name + "\"> <mimic>";
    std::set<std::string> seen = {j.name};
    for (const UrdfJoint* x = &j; x->mimic.present;) {
      x = jointByName.at(x->mimic.joint);
      if (!seen.insert(x->name).second)
        fail(urdf.where(j.mimic.line), elem,
             "cycle among mimic joints (joint '" + x->name + "' mimics itself through the chain)");
    }
    const int bf = tree0.jointId(j.name), bl = tree0.jointId(j.mimic.joint);
    if (bf < 0 || bl < 0)
      fail(urdf.where(j.mimic.line), elem, "mimic between fixed joints is meaningless");
    // Both joints' bodies belong to the cluster: paths up to the NCA of their parents.
    addChord({bf, bl}, urdf.where(j.mimic.line), elem,
             nearestCommonAncestor(tree0, tree0.parent[bf], tree0.parent[bl]));
  }
  return chords;
}

// --- 2. Merge overlapping chords; grow clusters to a single output body (footnote 2). -------

/// Group of every spanning-tree body: the union-find root of its merged chords, or n + b for a
/// body in no chord (a cluster of its own).
std::vector<int> mergeChords(const Model& tree0, const std::vector<ChordBodies>& chords) {
  const int n = tree0.nbodies;
  UnionFind uf(n);
  std::vector<char> inChord(n, 0);
  for (const auto& c : chords)
    for (int b : c.bodies) {
      uf.unite(b, c.bodies[0]);
      inChord[b] = 1;
    }
  for (bool changed = true; changed;) {
    changed = false;
    std::map<int, std::set<int>> baseParents;  // group root -> parents of its base bodies
    for (int b = 0; b < n; ++b) {
      if (!inChord[b]) continue;
      const int p = tree0.parent[b];
      if (p < 0 || !inChord[p] || uf.find(p) != uf.find(b)) baseParents[uf.find(b)].insert(p);
    }
    for (const auto& [root, parents] : baseParents) {
      if (parents.size() <= 1) continue;
      int C = *parents.begin();
      for (int p : parents) C = nearestCommonAncestor(tree0, C, p);
      for (int p : parents)
        for (int x : pathTo(tree0, p, C)) {
          inChord[x] = 1;
          uf.unite(x, root);
        }
      changed = true;
      break;  // recompute the groups
    }
  }
  std::vector<int> groupOf(n);
  for (int b = 0; b < n; ++b) groupOf[b] = inChord[b] ? uf.find(b) : n + b;
  return groupOf;
}

// --- 3. Clusters in regular order; renumber bodies so clusters are contiguous. -------------

/// The groups' bodies (original, topological order within a group), groups in the regular
/// order of the cluster tree: depth first from the roots, children ordered by their first body.
std::vector<std::vector<int>> clustersInRegularOrder(const Model& tree0,
                                                     const std::vector<int>& groupOf) {
  const int n = tree0.nbodies;
  std::map<int, std::vector<int>> groups;  // bodies in original (topological) order
  for (int b = 0; b < n; ++b) groups[groupOf[b]].push_back(b);
  std::map<int, std::vector<int>> childGroups;
  std::vector<int> rootGroups;
  for (const auto& [gid, bodies] : groups) {
    const int p = tree0.parent[bodies[0]];
    (p < 0 ? rootGroups : childGroups[groupOf[p]]).push_back(gid);
  }
  auto firstBody = [&](int gid) { return groups[gid][0]; };
  auto byFirst = [&](int a, int b) { return firstBody(a) < firstBody(b); };
  std::sort(rootGroups.begin(), rootGroups.end(), byFirst);
  for (auto& [g, ch] : childGroups) std::sort(ch.begin(), ch.end(), byFirst);
  std::vector<std::vector<int>> ordered;
  std::vector<int> stack(rootGroups.rbegin(), rootGroups.rend());
  while (!stack.empty()) {
    const int g = stack.back();
    stack.pop_back();
    ordered.push_back(groups[g]);
    auto it = childGroups.find(g);
    if (it != childGroups.end()) stack.insert(stack.end(), it->second.rbegin(), it->second.rend());
  }
  return ordered;
}

/// ModelOptions::cutLoops: bodies (so spanning q, v) in the order of the file loaded without it,
/// loops embedded: clusters sorted by their first body's position there, bodies within them
/// too (parents stay first). Unchanged when the loops cannot be embedded (no such model).
std::vector<std::vector<int>> orderLikeEmbedded(const Model& tree0, const UrdfDescription& urdf,
                                                const ModelOptions& options,
                                                const JointsByName& jointByName,
                                                std::vector<std::vector<int>> clusters) {
  if (!options.cutLoops || urdf.loops.empty()) return clusters;
  ModelOptions embedded = options;
  embedded.cutLoops = false;
  std::vector<int> position(tree0.nbodies, 0);
  try {  // the clusters of the embedded model
    int k = 0;
    const auto chords = chordBodies(tree0, urdf, embedded, jointByName);
    for (const auto& c : clustersInRegularOrder(tree0, mergeChords(tree0, chords)))
      for (int b : c) position[b] = k++;
  } catch (const ModelError&) {
    return clusters;
  }
  const auto before = [&](int a, int b) { return position[a] < position[b]; };
  for (auto& c : clusters) std::sort(c.begin(), c.end(), before);
  std::sort(clusters.begin(), clusters.end(), [&](auto& a, auto& b) { return before(a[0], b[0]); });
  return clusters;
}

/// cm.treeModel (tree0 with its bodies renumbered cluster by cluster), cm.bodyCluster and the
/// clusters' bodies, output bodies, parents and coordinate ranges.
void addClusters(ClusterModel& cm, const Model& tree0,
                 const std::vector<std::vector<int>>& clusterBodies, const std::string& source) {
  std::vector<int> order;
  for (const auto& bodies : clusterBodies)
    for (int b : bodies) order.push_back(b);
  cm.treeModel = permuteBodies(tree0, order);
  const Model& tree = cm.treeModel;
  cm.bodyCluster.assign(tree.nbodies, -1);
  int body = 0;
  for (const auto& bodies : clusterBodies) {
    Cluster c;
    c.firstBody = body;
    c.nbodies = static_cast<int>(bodies.size());
    body += c.nbodies;
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
      cm.bodyCluster[b] = static_cast<int>(cm.clusters.size());
    cm.clusters.push_back(c);
  }
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    Cluster& c = cm.clusters[k];
    const int last = c.firstBody + c.nbodies;
    c.outputBody = tree.parent[c.firstBody];
    c.parent = c.outputBody >= 0 ? cm.bodyCluster[c.outputBody] : -1;
    if (c.parent >= 0) cm.clusters[c.parent].children.push_back(k);
    for (int b = c.firstBody; b < last; ++b) {
      const int p = tree.parent[b];
      if (p < c.firstBody && p != c.outputBody)
        throw ModelError(source + ": internal error: cluster with two output bodies");
    }
    c.q0 = tree.idx_q[c.firstBody];
    c.v0 = tree.idx_v[c.firstBody];
    c.nq = (last < tree.nbodies ? tree.idx_q[last] : tree.nq) - c.q0;
    c.nv = (last < tree.nbodies ? tree.idx_v[last] : tree.nv) - c.v0;
    cm.maxClusterBodies = std::max(cm.maxClusterBodies, c.nbodies);
  }
}

/// Rotors: leaf bodies on revolute joints whose inertia is invariant under rotation about the
/// joint axis (then it is invariant for every angle; checked at one generic angle).
void findAxisymmetricRotors(ClusterModel& cm) {
  const Model& tree = cm.treeModel;
  cm.axisymmetricLeaf.assign(tree.nbodies, 0);
  cm.axisymmetricInertiaInParent.assign(tree.nbodies, SpatialInertia());
  for (int b = 0; b < tree.nbodies; ++b) {
    if (!tree.children[b].empty() || tree.joints[b].type != JointType::Revolute) continue;
    const SpatialInertia& I = tree.inertias[b];
    const Transform Rj = tree.joints[b].transform(std::array<double, 1>{1.0}.data());
    const SpatialInertia Ir = I.transformedBy(Rj);
    const double scale = I.mass + I.Io.norm() + I.h.norm();
    if ((Ir.Io - I.Io).norm() + (Ir.h - I.h).norm() > kAxisymmetryTolerance * scale) continue;
    cm.axisymmetricLeaf[b] = 1;
    cm.axisymmetricInertiaInParent[b] = I.transformedBy(tree.jointPlacement[b]);
  }
}

// --- 4. Constraints in the new numbering. --------------------------------------------------

/// Explicit relations of the couplings (coefficients on the spanning velocities).
void addCouplingRelations(ClusterModel& cm, const UrdfDescription& urdf) {
  for (const auto& c : urdf.couplings) {
    ExplicitRelation rel = couplingRelation(cm.treeModel, urdf, c);
    rel.cluster = cm.bodyCluster[cm.treeModel.velocityOwner[rel.terms[0].first]];
    cm.clusters[rel.cluster].relations.push_back(static_cast<int>(cm.relations.size()));
    cm.relations.push_back(rel);
  }
}

/// Explicit relations of the mimic joints; returns the followers' velocity indices (dependent
/// coordinates).
std::set<int> addMimicRelations(ClusterModel& cm, const UrdfDescription& urdf) {
  const Model& tree = cm.treeModel;
  std::set<int> mimicFollowers;
  for (const auto& j : urdf.joints) {
    if (!j.mimic.present) continue;
    const int bf = tree.jointId(j.name), bl = tree.jointId(j.mimic.joint);
    ExplicitRelation rel;
    rel.name = j.name + " mimics " + j.mimic.joint;
    rel.location = urdf.where(j.mimic.line);
    rel.terms = {{tree.idx_v[bf], 1.0}, {tree.idx_v[bl], -j.mimic.multiplier}};
    if (bf == bl) fail(rel.location, "<mimic>", "a joint cannot mimic itself");
    rel.offset = j.mimic.offset;
    rel.cluster = cm.bodyCluster[bf];
    mimicFollowers.insert(tree.idx_v[bf]);
    if (j.independentGiven && j.independent)
      fail(rel.location, "<joint name=\"" + j.name + "\">",
           "a mimic joint follows its leader and cannot be declared independent=\"true\"");
    cm.clusters[rel.cluster].relations.push_back(static_cast<int>(cm.relations.size()));
    cm.relations.push_back(rel);
  }
  return mimicFollowers;
}

/// Loop joints: implicit constraints of their clusters, or cut loops (left open: constraints
/// for the proximal solvers).
void addLoopJoints(ClusterModel& cm, const UrdfDescription& urdf, const ModelOptions& options) {
  for (const auto& l : urdf.loops) {
    if (detail::isCutLoop(l, options)) {
      cm.cutLoops.push_back(makeLoop(cm.treeModel, urdf, l));
      continue;
    }
    LoopJoint lj = makeLoop(cm.treeModel, urdf, l);
    // The deeper end lies inside the loop's cluster (the other may be its output body).
    lj.cluster = cm.bodyCluster[std::max(lj.successorBody, lj.predecessorBody)];
    cm.clusters[lj.cluster].loops.push_back(static_cast<int>(cm.loops.size()));
    cm.loops.push_back(lj);
  }
}

// --- 5. Independent coordinates per cluster. -----------------------------------------------

/// Each cluster's independent and dependent velocities (independent="false" joints and mimic
/// followers are dependent), its explicit constraint matrix and its number of constraint rows.
void partitionCoordinates(ClusterModel& cm, const UrdfDescription& urdf,
                          const ModelOptions& options, const JointsByName& jointByName,
                          const std::set<int>& mimicFollowers) {
  const Model& tree = cm.treeModel;
  const std::set<std::string> cutPathJoints = detail::cutLoopPathJoints(urdf, options);
  for (auto& c : cm.clusters) {
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
      const UrdfJoint* uj =
          jointByName.count(tree.jointNames[b]) ? jointByName.at(tree.jointNames[b]) : nullptr;
      bool declaredDependent = uj && uj->independentGiven && !uj->independent;
      if (c.constrained() && tree.nvs[b] != 1)  // multi-dof: dependent unless marked independent
        declaredDependent = !detail::checkMultiDofJoint(cm, c, b, uj);
      for (int k = 0; k < tree.nvs[b]; ++k) {
        const int iv = tree.idx_v[b] + k;
        const bool dep = c.constrained() && (declaredDependent || mimicFollowers.count(iv));
        if (!c.constrained() && declaredDependent && k == 0 && !cutPathJoints.count(uj->name))
          // The approximate (loop-free) benchmark models keep independent="false" on joints
          // whose loop they removed: the joint is free, so it is an independent coordinate.
          log::warn(
              "{}: <joint name=\"{}\">: marked independent=\"false\" but no coupling, "
              "mimic or loop constrains it; treated as independent (an unconstrained "
              "rotor)",
              urdf.where(uj->line), uj->name);
        (dep ? c.dependent : c.independent).push_back(iv - c.v0);
      }
    }
    c.ny = static_cast<int>(c.independent.size());
    c.Kexplicit.setZero(static_cast<int>(c.relations.size()), c.nv);
    for (size_t r = 0; r < c.relations.size(); ++r)
      for (const auto& [iv, coef] : cm.relations[c.relations[r]].terms)
        c.Kexplicit(static_cast<int>(r), iv - c.v0) += coef;
    c.constraintRows = static_cast<int>(c.relations.size());
    for (int l : c.loops) c.constraintRows += cm.loops[l].rows();
  }
}

/// Layout of the independent coordinates y (velocities) and yq (positions) over the clusters,
/// with their spanning indices and names.
void indexIndependentCoordinates(ClusterModel& cm) {
  const Model& tree = cm.treeModel;
  int y = 0, yq = 0;
  for (auto& c : cm.clusters) {
    c.y0 = y;
    c.yq0 = yq;
    for (int iv : c.independent) {
      cm.independentVelocity.push_back(c.v0 + iv);
      cm.independentVelocityNames.push_back(tree.velocityNames[c.v0 + iv]);
    }
    if (c.constrained()) {  // every position of each independent joint (whole joints)
      c.nyq = 0;
      for (size_t j = 0; j < c.independent.size();) {
        const int body = tree.velocityOwner[c.v0 + c.independent[j]];
        for (int a = 0; a < tree.nqs[body]; ++a)
          cm.independentPosition.push_back(tree.idx_q[body] + a);
        c.nyq += tree.nqs[body];
        j += tree.nvs[body];
      }
    } else {
      for (int k = 0; k < c.nq; ++k) cm.independentPosition.push_back(c.q0 + k);
      c.nyq = c.nq;
    }
    for (int k = c.yq0; k < c.yq0 + c.nyq; ++k)
      cm.independentPositionNames.push_back(tree.positionNames[cm.independentPosition[k]]);
    y += c.ny;
    yq += c.nyq;
  }
  cm.ny = y;
  cm.nyq = yq;
}

/// Cluster names: the chords' names, or the single body's link name.
void nameClusters(ClusterModel& cm) {
  for (auto& c : cm.clusters) {
    std::string name;
    for (int r : c.relations) name += (name.empty() ? "" : "+") + cm.relations[r].name;
    for (int l : c.loops) name += (name.empty() ? "" : "+") + cm.loops[l].name;
    if (name.empty() || c.nbodies == 1) name = cm.treeModel.bodyNames[c.firstBody];
    c.name = name;
  }
}

/// The cluster model with the independent coordinates the description marks.
ClusterModel buildAsMarked(const UrdfDescription& urdf, const ModelOptions& options) {
  const Model tree0 = detail::buildSpanningTree(urdf, options);
  JointsByName jointByName;
  for (const auto& j : urdf.joints) jointByName[j.name] = &j;

  const std::vector<ChordBodies> chords = chordBodies(tree0, urdf, options, jointByName);
  const std::vector<int> groupOf = mergeChords(tree0, chords);

  ClusterModel cm;
  auto clusters = clustersInRegularOrder(tree0, groupOf);
  clusters = orderLikeEmbedded(tree0, urdf, options, jointByName, std::move(clusters));
  addClusters(cm, tree0, clusters, urdf.source);
  findAxisymmetricRotors(cm);

  addCouplingRelations(cm, urdf);
  const std::set<int> mimicFollowers = addMimicRelations(cm, urdf);
  addLoopJoints(cm, urdf, options);

  partitionCoordinates(cm, urdf, options, jointByName, mimicFollowers);
  indexIndependentCoordinates(cm);
  nameClusters(cm);

  detail::closeReferenceConfiguration(cm);
  if (const int b = detail::masslessFloatingRoot(cm.treeModel); b >= 0) {  // H singular?
    ClusterData data(cm);
    const VecX zero = VecX::Zero(cm.ny);
    if (ceAba(cm, data, cm.qReference, VecX::Zero(cm.treeModel.nv), zero) ==
        Status::NotPositiveDefinite)
      detail::warnSingularFloatingRoot(urdf, cm.treeModel, b, data.errorMessage());
  }
  log::debug("{}: {} clusters, nv spanning {}, ny {}", urdf.source, cm.clusters.size(),
             cm.treeModel.nv, cm.ny);
  return cm;
}

}  // namespace

ClusterModel buildClusterModel(const UrdfDescription& urdf, const ModelOptions& options) {
  try {
    return buildAsMarked(urdf, options);
  } catch (const ModelError& first) {
    // A loop cluster whose unmarked multi-dof joint, dependent by default, does not fit its
    // freedom (a rod's spin on its ball joint): the joints the file leaves unmarked are chosen as
    // the MJCF reader chooses them (docs/mjcf.md section 3; marked joints keep their marks).
    // Models the marks build are never re-chosen; without a better choice, the first error,
    // saying why the choice was rejected when it was too ill-conditioned.
    UrdfDescription chosen = urdf;
    bool changed = false;
    std::string rejected;
    try {
      changed = detail::chooseLoopCoordinates(chosen, {}, options, true, &rejected);
    } catch (const ModelError&) {
    }
    if (!changed && !rejected.empty()) throw ModelError(first.what() + rejected);
    if (!changed) throw;
    try {
      return buildAsMarked(chosen, options);
    } catch (const ModelError&) {
    }
    throw;  // the first error
  }
}

}  // namespace clusterdyn
