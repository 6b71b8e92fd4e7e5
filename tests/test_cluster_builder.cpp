// Cluster-tree construction: clustering facts (merging, growth to a single output body, regular
// numbering, views), load-time errors that must name the offending element (file:line, name)
// and run-time failures (non-finite input, states violating the constraints).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "clusterdyn/clusterdyn.hpp"
#include "loop_model_generator.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
namespace fs = std::filesystem;

namespace {

// ---------------------------------------------------------------------------------------------
// Small URDF writers.

std::string link(const std::string& name, double mass = 1.0) {
  std::ostringstream os;
  os << "  <link name=\"" << name << "\"><inertial><origin xyz=\"0.05 0.01 0\"/><mass value=\""
     << mass << "\"/><inertia ixx=\"0.01\" iyy=\"0.012\" izz=\"0.015\" ixy=\"0\" ixz=\"0\" "
     << "iyz=\"0\"/></inertial></link>\n";
  return os.str();
}

std::string joint(const std::string& name, const std::string& type, const std::string& parent,
                  const std::string& child, const std::string& xyz = "0 0 0",
                  const std::string& rpy = "0 0 0", const std::string& axis = "0 0 1",
                  const std::string& attrs = "", const std::string& inner = "") {
  std::ostringstream os;
  os << "  <joint name=\"" << name << "\" type=\"" << type << "\"" << attrs << "><parent link=\""
     << parent << "\"/><child link=\"" << child << "\"/><origin xyz=\"" << xyz << "\" rpy=\"" << rpy
     << "\"/>";
  if (type != "fixed" && type != "floating" && type != "spherical")
    os << "<axis xyz=\"" << axis << "\"/>";
  if (type == "revolute" || type == "prismatic")
    os << "<limit lower=\"-10\" upper=\"10\" effort=\"10\" velocity=\"10\"/>";
  os << inner << "</joint>\n";
  return os.str();
}

std::string robot(const std::string& body) {
  return "<?xml version=\"1.0\"?>\n<robot name=\"test_robot\">\n  <link name=\"base\"/>\n" + body +
         "</robot>\n";
}

const std::string kDependent = " independent=\"false\"";

/// Planar crank-rocker in the x-y plane (ground 0.4, crank 0.1, coupler 0.35, rocker 0.3 by
/// default). At q = 0 the links are not collinear, so the builder's Gauss-Newton search from
/// q = 0 has a full-rank Jacobian. flags: independent attributes of crank, coupler, rocker.
std::string fourBarBody(double ground = 0.4, double crank = 0.1, double coupler = 0.35,
                        double rocker = 0.3,
                        const std::vector<std::string>& flags = {"", kDependent, kDependent},
                        const std::string& couplerType = "revolute") {
  auto s = [](double x) { return std::to_string(x); };
  return link("crank") + link("coupler") + link("rocker") +
         joint("crank_joint", "revolute", "base", "crank", "0 0 0", "0 0 1.3", "0 0 1", flags[0]) +
         joint("coupler_joint", couplerType, "crank", "coupler", s(crank) + " 0 0", "0 0 -1.3",
               "0 0 1", flags[1]) +
         joint("rocker_joint", "revolute", "base", "rocker", s(ground) + " 0 0", "0 0 1.6", "0 0 1",
               flags[2]) +
         "  <loop name=\"closure\" type=\"revolute\">\n"
         "    <predecessor link=\"coupler\"><origin xyz=\"" +
         s(coupler) +
         " 0 0\"/></predecessor>\n"
         "    <successor link=\"rocker\"><origin xyz=\"" +
         s(rocker) +
         " 0 0\"/></successor>\n"
         "    <axis xyz=\"0 0 1\"/>\n"
         "  </loop>\n";
}

/// A gear pair on the base: link + rotor, coupling ratio 7.
std::string gearBody(const std::string& rotorAttrs = kDependent) {
  return link("arm") + link("rotor", 0.1) +
         joint("arm_joint", "revolute", "base", "arm", "0 0.5 0", "0 0 0", "0 1 0") +
         joint("rotor_joint", "revolute", "base", "rotor", "0 0.4 0", "0 0 0", "0 1 0",
               rotorAttrs) +
         "  <coupling name=\"gear\">\n    <predecessor link=\"arm\"/>\n"
         "    <successor link=\"rotor\"/>\n    <ratio value=\"7\"/>\n  </coupling>\n";
}

int lineOf(const std::string& text, const std::string& marker) {
  const size_t pos = text.find(marker);
  EXPECT_NE(pos, std::string::npos) << marker;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + pos, '\n'));
}

/// Message of the ModelError thrown while parsing / building text as "bad.urdf".
std::string loadError(const std::string& text) {
  try {
    buildClusterModel(parseUrdfString(text, "bad.urdf"));
  } catch (const ModelError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a ModelError: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no ModelError for:\n" << text;
  return "";
}

::testing::AssertionResult mentions(const std::string& msg, const std::vector<std::string>& parts) {
  for (const auto& p : parts)
    if (msg.find(p) == std::string::npos)
      return ::testing::AssertionFailure() << "message does not mention '" << p << "':\n" << msg;
  return ::testing::AssertionSuccess();
}

std::string where(const std::string& text, const std::string& marker) {
  return "bad.urdf:" + std::to_string(lineOf(text, marker)) + ":";
}

std::set<std::string> clusterLinks(const ClusterModel& cm, int k) {
  std::set<std::string> s;
  const Cluster& c = cm.clusters[k];
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) s.insert(cm.treeModel.bodyNames[b]);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Structural invariants every cluster model must satisfy.

::testing::AssertionResult wellFormed(const ClusterModel& cm) {
  const Model& t = cm.treeModel;
  auto fail = [](const std::string& s) { return ::testing::AssertionFailure() << s; };
  int body = 0, y = 0, yq = 0;
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    const std::string ck = "cluster " + std::to_string(k) + " '" + c.name + "': ";
    if (c.firstBody != body) return fail(ck + "bodies not contiguous");
    body += c.nbodies;
    if (c.parent >= k) return fail(ck + "parent cluster not before the child");
    if (c.outputBody != t.parent[c.firstBody]) return fail(ck + "output body is not the parent");
    if ((c.outputBody < 0) != (c.parent < 0)) return fail(ck + "parent / output mismatch");
    if (c.outputBody >= 0 && cm.bodyCluster[c.outputBody] != c.parent)
      return fail(ck + "output body not in the parent cluster");
    if (c.parent >= 0) {
      const auto& ch = cm.clusters[c.parent].children;
      if (std::find(ch.begin(), ch.end(), k) == ch.end()) return fail(ck + "missing in children");
    }
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
      if (cm.bodyCluster[b] != k) return fail(ck + "bodyCluster mismatch");
      if (t.parent[b] >= b) return fail(ck + "tree not in regular order");
      const bool internal = t.parent[b] >= c.firstBody;
      if (!internal && t.parent[b] != c.outputBody)
        return fail(ck + "body '" + t.bodyNames[b] +
                    "' has a parent outside the cluster that "
                    "is not the output body");
    }
    if (!c.constrained() && c.nbodies != 1) return fail(ck + "unconstrained multi-body cluster");
    if (c.v0 != t.idx_v[c.firstBody] || c.q0 != t.idx_q[c.firstBody])
      return fail(ck + "q0/v0 mismatch");
    int nv = 0, nq = 0;
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) nv += t.nvs[b], nq += t.nqs[b];
    if (nv != c.nv || nq != c.nq) return fail(ck + "nv/nq mismatch");
    if (c.y0 != y || c.yq0 != yq) return fail(ck + "y0/yq0 not cumulative");
    y += c.ny;
    yq += c.nyq;
    std::vector<int> all = c.independent;
    all.insert(all.end(), c.dependent.begin(), c.dependent.end());
    std::sort(all.begin(), all.end());
    for (int i = 0; i < c.nv; ++i)
      if (i >= static_cast<int>(all.size()) || all[i] != i)
        return fail(ck + "independent + dependent is not a partition");
    if (static_cast<int>(c.independent.size()) != c.ny) return fail(ck + "ny mismatch");
    if (c.constrained() && c.selectedRows.size() != c.dependent.size())
      return fail(ck + "selected rows != dependent count");
  }
  if (body != t.nbodies) return fail("clusters do not cover the bodies");
  if (y != cm.ny || yq != cm.nyq) return fail("ny / nyq totals");
  if (!std::is_sorted(cm.independentVelocity.begin(), cm.independentVelocity.end()))
    return fail("independent coordinates not in spanning order");
  for (int j = 0; j < cm.ny; ++j)
    if (cm.independentVelocityNames[j] != t.velocityNames[cm.independentVelocity[j]])
      return fail("independent velocity names");
  for (int j = 0; j < cm.nyq; ++j)
    if (cm.independentPositionNames[j] != t.positionNames[cm.independentPosition[j]])
      return fail("independent position names");
  return ::testing::AssertionSuccess();
}

std::vector<std::string> modelFiles() {
  std::vector<std::string> files;
  const std::string shared = clusterdyn::test::sharedPath("urdfplus");
  if (fs::exists(shared))
    for (const auto& e : fs::directory_iterator(shared))
      if (e.path().extension() == ".urdf") files.push_back(e.path().string());
  for (const char* rel : {"benchmarks/variable_four_bar_urdf/four_bar_branch_4_5.urdf",
                          "benchmarks/parallel_chains/Implicit/depth10/loop_size13.urdf",
                          "benchmarks/parallel_chains/Explicit/depth10/loop_size16.urdf"})
    if (fs::exists(shared + "/" + rel)) files.push_back(shared + "/" + rel);
  const std::string models = CLUSTERDYN_MODELS_DIR;
  if (fs::exists(models))
    for (const auto& e : fs::directory_iterator(models))
      if (e.path().extension() == ".urdf") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// ---------------------------------------------------------------------------------------------
// Clustering facts.

TEST(ClusterBuilder, GeneratedMechanismsClusterAsExpected) {
  for (int s = 0; s < 40; ++s) {
    std::mt19937_64 rng(3000 + s);
    testgen::GeneratorOptions o;
    o.floatingBase = s % 2;
    o.treeLinks = 1 + s % 4;
    o.mechanisms = 1 + s % 4;
    const auto r = testgen::generateLoopModel(rng, o);
    SCOPED_TRACE(r.describe() + " seed " + std::to_string(s));
    ClusterModel cm;
    try {
      cm = buildClusterModel(parseUrdfString(r.urdf, "generated.urdf"));
    } catch (const ModelError& e) {
      FAIL() << e.what() << "\n" << r.urdf;
    }
    EXPECT_TRUE(wellFormed(cm));
    EXPECT_EQ(cm.treeModel.nv, r.spanningNv);
    EXPECT_EQ(cm.ny, r.independentNv);
    // The views name every chord and body (describeClusterTree only when no loop is pinned to
    // the world: see ClusterBuilderBugs.DescribeLoopPinnedToTheWorld).
    const std::string dot = clusterTreeDot(cm);
    bool worldLoop = false;
    for (const auto& l : cm.loops) {
      EXPECT_NE(dot.find("loop " + l.name), std::string::npos) << l.name;
      worldLoop |= l.predecessorBody < 0 || l.successorBody < 0;
    }
    for (const auto& name : cm.treeModel.bodyNames) EXPECT_NE(dot.find(name), std::string::npos);
    if (!worldLoop) {
      const std::string d = describeClusterTree(cm);
      for (const auto& l : cm.loops) EXPECT_NE(d.find("loop " + l.name), std::string::npos);
      for (const auto& rel : cm.relations)
        EXPECT_NE(d.find("relation " + rel.name), std::string::npos);
      for (const auto& name : cm.treeModel.bodyNames) EXPECT_NE(d.find(name), std::string::npos);
    }
    // Constrained clusters are exactly the generated mechanisms.
    std::map<std::set<std::string>, int> ours;
    for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k)
      if (cm.clusters[k].constrained()) ours[clusterLinks(cm, k)] = k;
    EXPECT_EQ(ours.size(), r.clusters.size());
    for (const auto& e : r.clusters) {
      const auto it = ours.find(e.links);
      if (it == ours.end()) {
        ADD_FAILURE() << "no cluster for the " << e.kind << " mechanism " << *e.links.begin();
        continue;
      }
      const Cluster& c = cm.clusters[it->second];
      EXPECT_EQ(c.ny, e.dof) << e.kind;
      EXPECT_EQ(c.implicit(), e.implicit) << e.kind;
      EXPECT_EQ(c.outputBody >= 0 ? cm.treeModel.bodyNames[c.outputBody] : std::string(),
                e.outputLink)
          << e.kind;
    }
  }
}

TEST(ClusterBuilder, ChordsAcrossDeepBranchesTakeTheWholePaths) {
  // base -> t -> a1 -> a2 and t -> b1 -> b2; a chord between a2 and b2 (whose parents a1, b1
  // differ) must pull a1 and b1 in so that the cluster has the single output body t.
  auto tree = [](const std::string& b2Inner, const std::string& chord, const std::string& b2Attrs) {
    return link("t") + link("a1") + link("a2") + link("b1") + link("b2") + link("c1") +
           joint("t_joint", "revolute", "base", "t", "0 0 0.1", "0 0 0", "1 0 0") +
           joint("a1_joint", "revolute", "t", "a1", "0.1 0 0") +
           joint("a2_joint", "revolute", "a1", "a2", "0.2 0 0") +
           joint("b1_joint", "revolute", "t", "b1", "-0.1 0 0") +
           joint("b2_joint", "revolute", "b1", "b2", "-0.2 0 0", "0 0 0", "0 0 1", b2Attrs,
                 b2Inner) +
           joint("c1_joint", "revolute", "a2", "c1", "0.1 0 0") + chord;
  };
  for (int variant = 0; variant < 2; ++variant) {
    SCOPED_TRACE(variant == 0 ? "mimic" : "coupling");
    const std::string text =
        variant == 0 ? tree("<mimic joint=\"a2_joint\" multiplier=\"0.5\"/>", "", "")
                     // q_a1 + q_a2 = q_b1 + q_b2
                     : tree("",
                            "  <coupling name=\"deep\"><predecessor link=\"a2\"/><successor "
                            "link=\"b2\"/><ratio value=\"1\"/></coupling>\n",
                            kDependent);
    const ClusterModel cm = buildClusterModel(parseUrdfString(robot(text), "deep.urdf"));
    EXPECT_TRUE(wellFormed(cm));
    const Model& t = cm.treeModel;
    const int k = cm.bodyCluster[t.bodyId("a2")];
    EXPECT_EQ(clusterLinks(cm, k), (std::set<std::string>{"a1", "a2", "b1", "b2"}));
    const Cluster& c = cm.clusters[k];
    EXPECT_EQ(c.outputBody, t.bodyId("t"));
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
      if (t.parent[b] < c.firstBody) {
        EXPECT_EQ(t.parent[b], c.outputBody) << t.bodyNames[b];
      }
    EXPECT_EQ(c.ny, 3);
    EXPECT_EQ(cm.ny, 5);
    // c1 hangs from a2 inside the cluster: its own cluster has output body a2.
    const Cluster& cc = cm.clusters[cm.bodyCluster[t.bodyId("c1")]];
    EXPECT_EQ(cc.nbodies, 1);
    EXPECT_EQ(cc.outputBody, t.bodyId("a2"));
    EXPECT_EQ(cc.parent, k);
  }
}

TEST(ClusterBuilder, NestedAndParallelLoopsMerge) {
  using K = testgen::MechanismKind;
  struct Expect {
    K kind;
    int constrainedClusters, bodies, loops, relations;
  };
  for (const Expect& e :
       {Expect{K::FourBarRotorOnCrank, 1, 4, 1, 1}, Expect{K::FourBarRotorOnCoupler, 1, 4, 1, 1},
        Expect{K::FourBarMotor, 1, 4, 1, 1}, Expect{K::ParallelFourBars, 1, 5, 2, 0},
        Expect{K::Belt, 1, 4, 0, 2}, Expect{K::Differential, 1, 4, 0, 2},
        Expect{K::MimicChain, 1, 3, 0, 2}}) {
    std::mt19937_64 rng(42);
    testgen::GeneratorOptions o;
    o.treeLinks = 0;
    o.mechanisms = 1;
    o.kinds = {e.kind};
    const auto r = testgen::generateLoopModel(rng, o);
    SCOPED_TRACE(r.describe());
    const ClusterModel cm = buildClusterModel(parseUrdfString(r.urdf, "merge.urdf"));
    EXPECT_TRUE(wellFormed(cm));
    int constrained = 0;
    for (const Cluster& c : cm.clusters) {
      if (!c.constrained()) continue;
      ++constrained;
      EXPECT_EQ(c.nbodies, e.bodies);
      EXPECT_EQ(static_cast<int>(c.loops.size()), e.loops);
      EXPECT_EQ(static_cast<int>(c.relations.size()), e.relations);
      EXPECT_EQ(c.ny, r.clusters[0].dof);
    }
    EXPECT_EQ(constrained, e.constrainedClusters);
  }
  // A gear pair carried by a four-bar's coupler is a child cluster (output body: the coupler).
  std::mt19937_64 rng(43);
  testgen::GeneratorOptions o;
  o.treeLinks = 0;
  o.mechanisms = 1;
  o.kinds = {testgen::MechanismKind::FourBarGearOnCoupler};
  const auto r = testgen::generateLoopModel(rng, o);
  const ClusterModel cm = buildClusterModel(parseUrdfString(r.urdf, "nested.urdf"));
  EXPECT_TRUE(wellFormed(cm));
  const Model& t = cm.treeModel;
  int bar = -1, gear = -1;
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    if (cm.clusters[k].implicit()) bar = k;
    if (cm.clusters[k].constrained() && !cm.clusters[k].implicit()) gear = k;
  }
  ASSERT_GE(bar, 0);
  ASSERT_GE(gear, 0);
  EXPECT_EQ(cm.clusters[gear].parent, bar);
  EXPECT_EQ(t.bodyNames[cm.clusters[gear].outputBody].find("coupler") != std::string::npos, true)
      << t.bodyNames[cm.clusters[gear].outputBody];
  // The MIT leg: the two belt couplings share knee_link and merge into one 4-body cluster.
  const std::string leg = clusterdyn::test::sharedPath("urdfplus/mit_humanoid_leg.urdf");
  if (fs::exists(leg)) {
    const ClusterModel mit = loadModel(leg);
    EXPECT_TRUE(wellFormed(mit));
    const int k = mit.bodyCluster[mit.treeModel.bodyId("knee_link")];
    EXPECT_EQ(clusterLinks(mit, k),
              (std::set<std::string>{"knee_link", "ankle_link", "knee_rotor", "ankle_rotor"}));
    EXPECT_EQ(mit.treeModel.bodyNames[mit.clusters[k].outputBody], "hip_ry_link");
    EXPECT_EQ(mit.clusters.size(), 4u);
  }
}

TEST(ClusterBuilder, RegularNumberingOnEveryModel) {
  for (const auto& f : modelFiles()) {
    SCOPED_TRACE(f);
    try {
      const ClusterModel cm = loadModel(f);
      EXPECT_TRUE(wellFormed(cm));
      // Renumbered tree: every body of a cluster comes after its parents (permuteBodies).
      EXPECT_EQ(cm.qReference.size(), cm.treeModel.nq);
    } catch (const ModelError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  // Interleaved file order (elements shuffled) still gives contiguous clusters.
  for (int s = 0; s < 10; ++s) {
    std::mt19937_64 rng(800 + s);
    testgen::GeneratorOptions o;
    o.mechanisms = 4;
    o.treeLinks = 4;
    o.floatingBase = s % 2;
    const auto r = testgen::generateLoopModel(rng, o);
    EXPECT_TRUE(wellFormed(buildClusterModel(parseUrdfString(r.urdf, "shuffled.urdf"))))
        << r.describe();
  }
}

TEST(ClusterBuilder, DescribeAndDotNameEverything) {
  const std::string text = robot(fourBarBody() + gearBody());
  const ClusterModel cm = buildClusterModel(parseUrdfString(text, "views.urdf"));
  const std::string d = describeClusterTree(cm), dot = clusterTreeDot(cm);
  for (const char* name :
       {"crank", "coupler", "rocker", "arm", "rotor", "crank_joint", "coupler_joint",
        "rocker_joint", "arm_joint", "rotor_joint", "closure", "gear"})
    EXPECT_NE(d.find(name), std::string::npos) << name << "\n" << d;
  EXPECT_NE(d.find("implicit"), std::string::npos) << d;
  EXPECT_NE(d.find("explicit"), std::string::npos) << d;
  EXPECT_NE(d.find("independent"), std::string::npos) << d;
  EXPECT_NE(d.find("dependent"), std::string::npos) << d;
  for (const Cluster& c : cm.clusters) EXPECT_NE(d.find("'" + c.name + "'"), std::string::npos);
  EXPECT_EQ(dot.rfind("digraph", 0), 0u) << dot;
  for (const char* name : {"crank", "coupler", "rocker", "arm", "rotor", "loop closure", "gear",
                           "world", "subgraph cluster_0", "style=dashed"})
    EXPECT_NE(dot.find(name), std::string::npos) << name << "\n" << dot;
  EXPECT_EQ(std::count(dot.begin(), dot.end(), '{'), std::count(dot.begin(), dot.end(), '}'));
}

// ---------------------------------------------------------------------------------------------
// Load-time errors: one test each, the message names file:line and the element.

TEST(ClusterBuilderErrors, ChordNamingAnUnknownLink) {
  {
    std::string text = robot(fourBarBody());
    const std::string from = "<successor link=\"rocker\">";
    text.replace(text.find(from), from.size(), "<successor link=\"nowhere\">");
    EXPECT_TRUE(mentions(loadError(text), {where(text, "<loop name=\"closure\""),
                                           "<loop name=\"closure\">", "'nowhere'"}));
  }
  {
    std::string text = robot(gearBody());
    const std::string from = "<predecessor link=\"arm\"/>";
    text.replace(text.find(from), from.size(), "<predecessor link=\"ghost\"/>");
    EXPECT_TRUE(mentions(loadError(text), {where(text, "<coupling name=\"gear\""),
                                           "<coupling name=\"gear\">", "'ghost'"}));
  }
}

TEST(ClusterBuilderErrors, CouplingWithoutDependentJoint) {
  const std::string text = robot(gearBody(""));  // the rotor is not marked dependent
  EXPECT_TRUE(
      mentions(loadError(text), {where(text, "<coupling name=\"gear\""), "'gear'", "'arm_joint'",
                                 "'rotor_joint'", "more independent coordinates"}));
}

TEST(ClusterBuilder, UnconstrainedRotorIsIndependentWithAWarning) {
  // The shared approx_loop_size*.urdf files keep independent="false" on joints whose loop they
  // removed; such a joint is free, so it must load as an independent coordinate (with a warning).
  const std::string text = robot(
      link("arm") + link("rotor", 0.1) + joint("arm_joint", "revolute", "base", "arm") +
      joint("rotor_joint", "revolute", "base", "rotor", "0 0.1 0", "0 0 0", "0 0 1", kDependent));
  const ClusterModel cm = buildClusterModel(parseUrdfString(text, "rotor.urdf"));
  EXPECT_EQ(cm.ny, 2);
  EXPECT_EQ(cm.clusters.size(), 2u);
  EXPECT_NE(std::find(cm.independentVelocityNames.begin(), cm.independentVelocityNames.end(),
                      "rotor_joint"),
            cm.independentVelocityNames.end());
}

TEST(ClusterBuilder, EverySharedUrdfFileLoads) {
  const std::string shared = clusterdyn::test::sharedPath("urdfplus");
  if (!fs::exists(shared)) GTEST_SKIP() << "no " << shared;
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(shared)) {
    if (e.path().extension() != ".urdf") continue;
    ++files;
    try {
      const ClusterModel cm = loadModel(e.path().string());
      EXPECT_TRUE(wellFormed(cm)) << e.path();
    } catch (const ModelError& err) {
      ADD_FAILURE() << err.what();
    }
  }
  EXPECT_GT(files, 200);
}

TEST(ClusterBuilderErrors, CycleAmongMimics) {
  const std::string text = robot(link("l1") + link("l2") + link("l3") + link("l4") +
                                 joint("j1", "revolute", "base", "l1", "0 0 0", "0 0 0", "0 0 1",
                                       "", "<mimic joint=\"j3\" multiplier=\"2\"/>") +
                                 joint("j2", "revolute", "base", "l2", "0 0.1 0", "0 0 0", "0 0 1",
                                       "", "<mimic joint=\"j1\" multiplier=\"2\"/>") +
                                 joint("j3", "revolute", "base", "l3", "0 0.2 0", "0 0 0", "0 0 1",
                                       "", "<mimic joint=\"j2\" multiplier=\"2\"/>") +
                                 joint("j4", "revolute", "base", "l4", "0 0.3 0"));
  EXPECT_TRUE(mentions(loadError(text), {where(text, "<mimic joint=\"j3\""), "<joint name=\"j1\">",
                                         "cycle", "mimic"}));
}

TEST(ClusterBuilderErrors, LoopThatCannotClose) {
  // Ground 2.0 but crank + coupler + rocker = 0.6: the loop frames can never meet.
  const std::string text = robot(fourBarBody(2.0, 0.2, 0.2, 0.2));
  EXPECT_TRUE(mentions(loadError(text),
                       {where(text, "<loop name=\"closure\""), "'closure'", "cannot be closed"}));
}

/// Runs loadError(text) in a child process (a crash of the library fails the test instead of
/// killing the binary) and checks that the message mentions every part.
void expectLoadErrorInChild(const std::string& text, const std::vector<std::string>& parts) {
  EXPECT_EXIT(
      {
        const std::string msg = loadError(text);
        const auto r = mentions(msg, parts);
        std::fprintf(stderr, "%s\n", r ? "ok" : r.message());
        std::exit(r && !::testing::Test::HasFailure() ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ClusterBuilderErrors, MoreIndependentCoordinatesThanFreedom) {
  // Explicit cluster: see CouplingWithoutDependentJoint. Implicit loop, every joint marked
  // independent (no dependent coordinate at all). Run in a child: this used to crash.
  const std::string all = robot(fourBarBody(0.4, 0.1, 0.35, 0.3, {"", "", ""}));
  expectLoadErrorInChild(
      all, {where(all, "<loop name=\"closure\""), "'closure'", "'crank_joint'", "'coupler_joint'",
            "'rocker_joint'", "more independent coordinates than the cluster's freedom"});
}

TEST(ClusterBuilderErrors, OneIndependentCoordinateTooManyIsDiagnosedAsSuch) {
  // Two of three independent: the count (2) exceeds the freedom (1); the message must say so
  // (not only that the loop cannot be closed, which sends the user after the geometry).
  const std::string two = robot(fourBarBody(0.4, 0.1, 0.35, 0.3, {"", "", kDependent}));
  EXPECT_TRUE(
      mentions(loadError(two),
               {where(two, "<loop name=\"closure\""), "'closure'", "'crank_joint'",
                "'coupler_joint'", "more independent coordinates than the cluster's freedom"}));
}

TEST(ClusterBuilderErrors, IndependentSetThatDoesNotParametrizeTheLoop) {
  // Five-bar closed at q = 0: j1, j2 (independent) place the loop point at (1, 1); the dyad
  // j3 (at (1, 3)) - j4 (at (1, 2)) is stretched along y there, so the dependent pair cannot
  // move the point along y: the count (2 = freedom) is right but the set is singular.
  const std::string text =
      robot(link("l1") + link("l2") + link("l3") + link("l4") +
            joint("j1", "revolute", "base", "l1") + joint("j2", "revolute", "l1", "l2", "1 0 0") +
            joint("j3", "revolute", "base", "l3", "1 3 0", "0 0 0", "0 0 1", kDependent) +
            joint("j4", "revolute", "l3", "l4", "0 -1 0", "0 0 0", "0 0 1", kDependent) +
            "  <loop name=\"five_bar\" type=\"revolute\">\n"
            "    <predecessor link=\"l2\"><origin xyz=\"0 1 0\"/></predecessor>\n"
            "    <successor link=\"l4\"><origin xyz=\"0 -1 0\"/></successor>\n"
            "    <axis xyz=\"0 0 1\"/>\n  </loop>\n");
  EXPECT_TRUE(mentions(loadError(text), {where(text, "<loop name=\"five_bar\""), "'five_bar'",
                                         "do not parametrize", "'j1'", "'j2'"}));
}

TEST(ClusterBuilder, SphericalJointInsideALoopIsADependentJoint) {
  // The four-bar's coupler on a ball joint: the revolute loop's rotation rows stop its spin, so
  // the crank still parametrizes the loop; the ball joint is dependent (unmarked or marked).
  for (const std::string& mark : {std::string(), kDependent}) {
    const ClusterModel m = buildClusterModel(parseUrdfString(
        robot(fourBarBody(0.4, 0.1, 0.35, 0.3, {"", mark, kDependent}, "spherical"))));
    ASSERT_EQ(m.loops.size(), 1u);
    EXPECT_EQ(m.ny, 1);
    EXPECT_EQ(m.independentVelocityNames[0], "crank_joint");
  }
}

TEST(ClusterBuilderErrors, SphericalJointInsideALoopMarkedIndependent) {
  // Marked independent, the ball joint is independent as a whole (its 3 velocities in y_dot):
  // with the crank, 4 independent coordinates for the loop's single degree of freedom.
  const std::string text = robot(
      fourBarBody(0.4, 0.1, 0.35, 0.3, {"", " independent=\"true\"", kDependent}, "spherical"));
  EXPECT_TRUE(mentions(loadError(text),
                       {where(text, "<loop name=\"closure\""), "has 4 independent coordinates",
                        "'crank_joint'", "'coupler_joint:wx'", "more independent coordinates"}));
}

// Bug reproduction: a mimic whose leader is an ANCESTOR of the follower (a finger whose distal
// joint mimics the proximal one). The chord's nearest common ancestor is the leader's body, so
// the cluster is {distal} only while the relation also involves the proximal joint: the
// builder writes Kexplicit(r, iv - c.v0) with a negative column (heap corruption). Run in a
// child process so that a crash fails this test only.
TEST(ClusterBuilderBugs, MimicLeaderIsAncestorOfFollower) {
  const std::string text =
      robot(link("proximal") + link("distal", 0.5) + joint("j1", "revolute", "base", "proximal") +
            joint("j2", "revolute", "proximal", "distal", "0.2 0 0", "0 0 0", "0 0 1", "",
                  "<mimic joint=\"j1\" multiplier=\"0.5\" offset=\"0.1\"/>"));
  EXPECT_EXIT(
      {
        int bad = 0;
        try {
          const ClusterModel cm = buildClusterModel(parseUrdfString(text, "finger.urdf"));
          const Model& t = cm.treeModel;
          // Expected: one cluster holding both joints, y = [j1], G = [1; 0.5].
          const int k = cm.bodyCluster[t.bodyId("distal")];
          const Cluster& c = cm.clusters[k];
          if (c.nbodies != 2 || cm.bodyCluster[t.bodyId("proximal")] != k || cm.ny != 1) bad |= 1;
          ClusterData data(cm);
          VecX y = VecX::Constant(cm.nyq, 0.3);
          if (solveLoopClosure(cm, data, y) != Status::Ok) bad |= 2;
          if (std::abs(data.q[t.positionIndex("j2")] - (0.5 * 0.3 + 0.1)) > 1e-12) bad |= 4;
          if (c.G.rows() == 2 && std::abs(c.G(t.velocityIndex("j2") - c.v0, 0) - 0.5) > 1e-12)
            bad |= 8;
          std::ostringstream os;
          os << data.q.transpose();
          std::fprintf(stderr, "clusters %zu, cluster of distal: %d bodies, ny %d, q %s\n",
                       cm.clusters.size(), c.nbodies, cm.ny, os.str().c_str());
        } catch (const std::exception& e) {
          std::fprintf(stderr, "exception: %s\n", e.what());
          bad |= 16;
        }
        std::exit(bad);
      },
      ::testing::ExitedWithCode(0), "");
}

// Bug reproduction: a loop whose <successor> is the link the mechanism hangs from (its output
// body). buildClusterModel assigns every loop to the cluster of its successor body when that
// body is not the world, so this loop lands in the PARENT cluster and the four-bar's cluster has
// no constraint ("unconstrained rotor" for its dependent joints; without independent="false"
// marks the loop's rows would reference bodies outside the cluster it was put in). The same
// mechanism with the two loop ends swapped builds fine.
std::string serialFourBarOnArm(bool armIsSuccessor) {
  const std::string arm = "<link name=\"arm\"/>";
  const std::string ends[2] = {
      "<predecessor link=\"arm\"><origin xyz=\"0.4 0 0\"/></predecessor>"
      "<successor link=\"rocker\"><origin xyz=\"0.3 0 0\"/></successor>",
      "<predecessor link=\"rocker\"><origin xyz=\"0.3 0 0\"/></predecessor>"
      "<successor link=\"arm\"><origin xyz=\"0.4 0 0\"/></successor>"};
  return robot(link("arm") + link("crank") + link("coupler") + link("rocker") +
               joint("arm_joint", "revolute", "base", "arm", "0 0 0.5", "0 0 0", "1 0 0") +
               joint("crank_joint", "revolute", "arm", "crank", "0 0 0", "0 0 1.3") +
               joint("coupler_joint", "revolute", "crank", "coupler", "0.1 0 0", "0 0 -1.3",
                     "0 0 1", kDependent) +
               joint("rocker_joint", "revolute", "coupler", "rocker", "0.35 0 0", "0 0 -1.6",
                     "0 0 1", kDependent) +
               "  <loop name=\"pin\" type=\"revolute\">" + ends[armIsSuccessor ? 1 : 0] +
               "<axis xyz=\"0 0 1\"/></loop>\n");
}

TEST(ClusterBuilderBugs, LoopWhoseSuccessorIsTheOutputBody) {
  for (bool armIsSuccessor : {false, true}) {
    SCOPED_TRACE(armIsSuccessor ? "arm = successor" : "arm = predecessor");
    try {
      const ClusterModel cm =
          buildClusterModel(parseUrdfString(serialFourBarOnArm(armIsSuccessor), "pin.urdf"));
      const Model& t = cm.treeModel;
      const int k = cm.bodyCluster[t.bodyId("crank")];
      EXPECT_EQ(clusterLinks(cm, k), (std::set<std::string>{"crank", "coupler", "rocker"}));
      ASSERT_EQ(cm.loops.size(), 1u);
      EXPECT_EQ(cm.loops[0].cluster, k) << "loop assigned to the wrong cluster";
      EXPECT_EQ(cm.ny, 2);
      EXPECT_TRUE(wellFormed(cm));
    } catch (const ModelError& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

// Bug reproduction: describeClusterTree prints t.bodyNames[loop.predecessorBody] for a loop
// whose predecessor is the fixed world (body -1): an out-of-range std::vector read (garbage or
// a crash). Expected: the loop line names "world". Run in a child process.
TEST(ClusterBuilderBugs, DescribeLoopPinnedToTheWorld) {
  const std::string text =
      robot(link("crank") + link("coupler") + link("rocker") +
            joint("crank_joint", "revolute", "base", "crank", "0 0 0", "0 0 1.3") +
            joint("coupler_joint", "revolute", "crank", "coupler", "0.1 0 0", "0 0 -1.3", "0 0 1",
                  kDependent) +
            joint("rocker_joint", "revolute", "coupler", "rocker", "0.35 0 0", "0 0 -1.6", "0 0 1",
                  kDependent) +
            "  <loop name=\"pin\" type=\"revolute\"><predecessor link=\"base\"><origin "
            "xyz=\"0.4 0 0\"/></predecessor><successor link=\"rocker\"><origin xyz=\"0.3 0 0\"/>"
            "</successor><axis xyz=\"0 0 1\"/></loop>\n");
  const ClusterModel cm = buildClusterModel(parseUrdfString(text, "world_pin.urdf"));
  EXPECT_EQ(cm.loops[0].predecessorBody, -1);
  EXPECT_NE(clusterTreeDot(cm).find("world -> b"), std::string::npos);
  EXPECT_EXIT(
      {
        const std::string d = describeClusterTree(cm);
        const bool ok = d.find("world -> rocker") != std::string::npos;
        std::fprintf(stderr, "%s\n", d.c_str());
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// ---------------------------------------------------------------------------------------------
// Run-time failures.

struct FourBarWithGear {
  ClusterModel cm;
  FourBarWithGear() {
    cm = buildClusterModel(parseUrdfString(robot(fourBarBody() + gearBody()), "fg.urdf"));
  }
};

TEST(ClusterRuntime, NonFiniteInputsThenTheWorkspaceStillWorks) {
  FourBarWithGear m;
  const ClusterModel& cm = m.cm;
  const Model& t = cm.treeModel;
  ClusterData data(cm);
  VecX y = VecX::Constant(cm.nyq, 0.2), yd = VecX::Constant(cm.ny, 0.5);
  ASSERT_EQ(independentToSpanning(cm, data, y, yd), Status::Ok) << data.errorMessage();
  const VecX q = data.q, v = data.v, tau = VecX::Constant(cm.ny, 0.3);
  const VecX tauS = VecX::Constant(t.nv, 0.3);
  ASSERT_EQ(ceAba(cm, data, q, v, tau), Status::Ok);
  const VecX ydd = data.ydd;
  ASSERT_EQ(ceRnea(cm, data, q, v, ydd), Status::Ok);
  const VecX tauBack = data.tauY;
  ASSERT_EQ(clusterMassMatrix(cm, data, q), Status::Ok);
  const MatX H = data.H;

  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
    for (int i = 0; i < t.nv; i += 2) {
      VecX qb = q, vb = v, tb = tau, tsb = tauS, yb = y, ydb = yd;
      qb[i % t.nq] = bad;
      vb[i] = bad;
      tb[i % cm.ny] = bad;
      tsb[i] = bad;
      yb[i % cm.nyq] = bad;
      ydb[i % cm.ny] = bad;
      EXPECT_EQ(ceAba(cm, data, qb, v, tau), Status::NonFinite);
      EXPECT_EQ(ceAba(cm, data, q, vb, tau), Status::NonFinite);
      EXPECT_EQ(ceAba(cm, data, q, v, tb), Status::NonFinite);
      EXPECT_STRNE(data.errorMessage(), "");
      EXPECT_EQ(ceAbaSpanningForces(cm, data, q, v, tsb), Status::NonFinite);
      EXPECT_EQ(ceRnea(cm, data, q, v, tb), Status::NonFinite);
      EXPECT_EQ(ceRnea(cm, data, qb, v, ydd), Status::NonFinite);
      EXPECT_EQ(clusterMassMatrix(cm, data, qb), Status::NonFinite);
      EXPECT_EQ(clusterBias(cm, data, q, vb), Status::NonFinite);
      EXPECT_EQ(solveLoopClosure(cm, data, yb), Status::NonFinite);
      EXPECT_EQ(independentToSpanning(cm, data, y, ydb), Status::NonFinite);
      EXPECT_EQ(ceAbaIndependent(cm, data, yb, yd, tau), Status::NonFinite);
      EXPECT_EQ(ceAbaIndependent(cm, data, y, yd, tb), Status::NonFinite);
      EXPECT_EQ(projectToConstraints(cm, data, qb, v), Status::NonFinite);
      EXPECT_EQ(projectToConstraints(cm, data, q, vb), Status::NonFinite);
      EXPECT_EQ(clusterConstraintMatrices(cm, data, q, vb), Status::NonFinite);
      std::vector<Force> fext(t.nbodies, Force::Zero());
      fext[i % t.nbodies][3] = bad;
      EXPECT_EQ(ceAba(cm, data, q, v, tau, fext.data()), Status::NonFinite);
      EXPECT_EQ(ceRnea(cm, data, q, v, ydd, fext.data()), Status::NonFinite);
    }
  }
  // The workspace is intact: the same calls give the same results.
  ASSERT_EQ(ceAba(cm, data, q, v, tau), Status::Ok) << data.errorMessage();
  EXPECT_STREQ(data.errorMessage(), "");
  EXPECT_TRUE(clusterdyn::test::isClose(data.ydd, ydd, 1e-14));
  ASSERT_EQ(ceRnea(cm, data, q, v, ydd), Status::Ok);
  EXPECT_TRUE(clusterdyn::test::isClose(data.tauY, tauBack, 1e-14));
  ASSERT_EQ(clusterMassMatrix(cm, data, q), Status::Ok);
  EXPECT_TRUE(clusterdyn::test::isClose(data.H, H, 1e-14));
  ASSERT_EQ(ceAbaIndependent(cm, data, y, yd, tau), Status::Ok) << data.errorMessage();
  EXPECT_TRUE(clusterdyn::test::isClose(data.ydd, ydd, 1e-10));
  EXPECT_TRUE(clusterdyn::test::isClose(data.q, q, 1e-10));
}

TEST(ClusterRuntime, StatesViolatingTheConstraintsAreRejected) {
  FourBarWithGear m;
  const ClusterModel& cm = m.cm;
  const Model& t = cm.treeModel;
  ClusterData data(cm);
  VecX y = VecX::Constant(cm.nyq, -0.3), yd = VecX::Constant(cm.ny, 0.7);
  ASSERT_EQ(independentToSpanning(cm, data, y, yd), Status::Ok) << data.errorMessage();
  const VecX q = data.q, v = data.v, tau = VecX::Constant(cm.ny, 0.1);
  ASSERT_EQ(ceAba(cm, data, q, v, tau), Status::Ok);
  const VecX ydd = data.ydd;
  // Position violations: a dependent loop joint, and the rotor of the gear.
  for (const char* name : {"rocker_joint", "coupler_joint", "rotor_joint"}) {
    SCOPED_TRACE(name);
    VecX qb = q;
    qb[t.positionIndex(name)] += 1e-3;
    EXPECT_EQ(ceAba(cm, data, qb, v, tau), Status::ConstraintFailure);
    EXPECT_NE(std::string(data.errorMessage()).find("constraint"), std::string::npos)
        << data.errorMessage();
    EXPECT_EQ(ceAbaSpanningForces(cm, data, qb, v, VecX::Zero(t.nv)), Status::ConstraintFailure);
    EXPECT_EQ(ceRnea(cm, data, qb, v, ydd), Status::ConstraintFailure);
    EXPECT_EQ(clusterMassMatrix(cm, data, qb), Status::ConstraintFailure);
    EXPECT_EQ(clusterBias(cm, data, qb, v), Status::ConstraintFailure);
    // Velocity violations.
    VecX vb = v;
    vb[t.velocityIndex(name)] += 1e-2;
    EXPECT_EQ(ceAba(cm, data, q, vb, tau), Status::ConstraintFailure);
    EXPECT_EQ(ceRnea(cm, data, q, vb, ydd), Status::ConstraintFailure);
    EXPECT_EQ(clusterBias(cm, data, q, vb), Status::ConstraintFailure);
  }
  // The workspace still works.
  ASSERT_EQ(ceAba(cm, data, q, v, tau), Status::Ok) << data.errorMessage();
  EXPECT_TRUE(clusterdyn::test::isClose(data.ydd, ydd, 1e-14));
  // Wrong workspace / sizes.
  const ClusterModel other = buildClusterModel(parseUrdfString(robot(gearBody()), "g.urdf"));
  ClusterData otherData(other);
  EXPECT_EQ(ceAba(cm, otherData, q, v, tau), Status::WorkspaceMismatch);
  EXPECT_EQ(ceAba(cm, data, q.head(t.nq - 1), v, tau), Status::InvalidSize);
  EXPECT_EQ(ceAba(cm, data, q, v, VecX::Zero(cm.ny + 1)), Status::InvalidSize);
  EXPECT_EQ(solveLoopClosure(cm, data, VecX::Zero(cm.nyq + 1)), Status::InvalidSize);
}

}  // namespace

// Rotors (leaf bodies whose inertia is symmetric about their revolute joint axis) get a constant
// inertia in their parent's frame; it must equal the transformed inertia at any joint angle, and
// bodies that are not symmetric must not be flagged.
TEST(ClusterBuilder, AxisymmetricRotorInertiaIsTheSameAtEveryAngle) {
  const ClusterModel cm =
      buildClusterModel(parseUrdfFile(std::string(CLUSTERDYN_MODELS_DIR) + "/cd_quadruped.urdf"));
  const Model& t = cm.treeModel;
  int rotors = 0;
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> angle(-7.0, 7.0);
  for (int b = 0; b < t.nbodies; ++b) {
    bool invariant = t.children[b].empty() && t.joints[b].type == JointType::Revolute;
    double worst = 0.0;
    for (int k = 0; k < 5 && invariant; ++k) {
      const double th[1] = {angle(rng)};
      const SpatialInertia I =
          t.inertias[b].transformedBy(t.jointPlacement[b] * t.joints[b].transform(th));
      worst = std::max(worst, (I.matrix() - cm.axisymmetricInertiaInParent[b].matrix()).norm());
    }
    if (cm.axisymmetricLeaf[b]) {
      ++rotors;
      EXPECT_LE(worst, 1e-12 * (1.0 + t.inertias[b].matrix().norm())) << t.bodyNames[b];
    }
  }
  EXPECT_EQ(rotors, 12);  // the twelve motor rotors; the shanks are leaves but not symmetric
}
