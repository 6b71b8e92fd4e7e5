#include "cli_json.hpp"

#include <cmath>

namespace clusterdyn::cli {

using json = nlohmann::ordered_json;

json finiteOrNull(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

namespace {

json vec3(const Vec3& v) { return json::array({v.x(), v.y(), v.z()}); }

json transformJson(const Transform& T) {
  json R = json::array();
  for (int r = 0; r < 3; ++r) R.push_back(json::array({T.R(r, 0), T.R(r, 1), T.R(r, 2)}));
  return {{"translation", vec3(T.p)}, {"rotation_matrix", R}};
}

std::string bodyLink(const Model& model, int body) {
  return body >= 0 ? model.bodyNames[body] : std::string("world");
}

}  // namespace

json modelInfoJson(const Model& model) {
  int floating = -1;
  for (int i = 0; i < model.nbodies; ++i)
    if (model.joints[i].type == JointType::Floating) floating = i;

  json bodies = json::array(), joints = json::array(), frames = json::array();
  for (int i = 0; i < model.nbodies; ++i) {
    const SpatialInertia& I = model.inertias[i];
    const Joint& j = model.joints[i];
    bodies.push_back({{"index", i},
                      {"link", model.bodyNames[i]},
                      {"joint", model.jointNames[i]},
                      {"parent", bodyLink(model, model.parent[i])},
                      {"parent_index", model.parent[i]},
                      {"mass", I.mass},
                      {"com", vec3(I.com())}});
    json lower = json::array(), upper = json::array(), vel = json::array(), eff = json::array(),
         qn = json::array(), vn = json::array();
    for (int k = 0; k < model.nqs[i]; ++k) {
      const int iq = model.idx_q[i] + k;
      lower.push_back(finiteOrNull(model.lowerPositionLimit[iq]));
      upper.push_back(finiteOrNull(model.upperPositionLimit[iq]));
      qn.push_back(model.positionNames[iq]);
    }
    for (int k = 0; k < model.nvs[i]; ++k) {
      const int iv = model.idx_v[i] + k;
      vel.push_back(finiteOrNull(model.velocityLimit[iv]));
      eff.push_back(finiteOrNull(model.effortLimit[iv]));
      vn.push_back(model.velocityNames[iv]);
    }
    json jj = {{"name", model.jointNames[i]},
               {"type", jointTypeName(j.type)},
               {"parent", bodyLink(model, model.parent[i])},
               {"child", model.bodyNames[i]},
               {"idx_q", model.idx_q[i]},
               {"idx_v", model.idx_v[i]},
               {"nq", model.nqs[i]},
               {"nv", model.nvs[i]}};
    if (j.type == JointType::Revolute || j.type == JointType::Prismatic ||
        j.type == JointType::Planar)
      jj["axis"] = vec3(j.axis);
    jj["placement"] = transformJson(model.jointPlacement[i]);
    jj["position_names"] = qn;
    jj["velocity_names"] = vn;
    jj["limits"] = {{"lower", lower}, {"upper", upper}, {"velocity", vel}, {"effort", eff}};
    joints.push_back(jj);
  }
  for (const Frame& f : model.frames)
    frames.push_back({{"name", f.name},
                      {"body", bodyLink(model, f.body)},
                      {"body_index", f.body},
                      {"fused", !f.isBody},
                      {"placement", transformJson(f.placement)}});

  json out;
  out["name"] = model.name;
  out["root_link"] = model.rootLink;
  out["floating_base"] = floating >= 0;
  if (floating >= 0) out["floating_joint"] = model.jointNames[floating];
  out["nbodies"] = model.nbodies;
  out["njoints"] = model.nbodies;
  out["nframes"] = model.frames.size();
  out["nq"] = model.nq;
  out["nv"] = model.nv;
  out["total_mass"] = model.totalMass();
  out["gravity"] = vec3(model.gravity);
  out["position_names"] = model.positionNames;
  out["velocity_names"] = model.velocityNames;
  out["bodies"] = bodies;
  out["joints"] = joints;
  out["frames"] = frames;
  return out;
}

json clusterTreeJson(const ClusterModel& cm) {
  const Model& t = cm.treeModel;
  json loops = json::array(), relations = json::array();
  for (const LoopJoint& l : cm.loops)
    loops.push_back({{"name", l.name},
                     {"type", jointTypeName(l.type)},
                     {"predecessor", bodyLink(t, l.predecessorBody)},
                     {"successor", bodyLink(t, l.successorBody)},
                     {"rows", l.rows()},
                     {"cluster", l.cluster},
                     {"location", l.location}});
  for (const ExplicitRelation& r : cm.relations) {
    json terms = json::array();
    for (const auto& [iv, coeff] : r.terms)
      terms.push_back({{"coordinate", t.velocityNames[iv]}, {"coefficient", coeff}});
    relations.push_back({{"name", r.name},
                         {"terms", terms},
                         {"offset", r.offset},
                         {"cluster", r.cluster},
                         {"location", r.location}});
  }
  int constrained = 0;
  for (const Cluster& c : cm.clusters) constrained += c.constrained() ? 1 : 0;
  json out;
  out["nclusters"] = cm.clusters.size();
  out["nconstrained_clusters"] = constrained;
  out["max_cluster_bodies"] = cm.maxClusterBodies;
  out["nq_spanning"] = t.nq;
  out["nv_spanning"] = t.nv;
  out["nq_independent"] = cm.nyq;
  out["nv_independent"] = cm.ny;
  out["independent_position_names"] = cm.independentPositionNames;
  out["independent_velocity_names"] = cm.independentVelocityNames;
  out["loops"] = loops;
  out["relations"] = relations;
  return out;
}

json clustersJson(const ClusterModel& cm) {
  const Model& t = cm.treeModel;
  json out = json::array();
  for (size_t k = 0; k < cm.clusters.size(); ++k) {
    const Cluster& c = cm.clusters[k];
    json bodies = json::array(), joints = json::array(), indep = json::array(), dep = json::array(),
         loops = json::array(), relations = json::array();
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
      bodies.push_back(t.bodyNames[b]);
      joints.push_back(t.jointNames[b]);
    }
    for (int iv : c.independent) indep.push_back(t.velocityNames[c.v0 + iv]);
    for (int iv : c.dependent) dep.push_back(t.velocityNames[c.v0 + iv]);
    for (int l : c.loops) loops.push_back(cm.loops[l].name);
    for (int r : c.relations) relations.push_back(cm.relations[r].name);
    json e;
    e["index"] = k;
    e["name"] = c.name;
    e["parent"] = c.parent;
    e["parent_name"] = c.parent >= 0 ? cm.clusters[c.parent].name : std::string("world");
    e["children"] = c.children;
    e["output_body"] = bodyLink(t, c.outputBody);
    e["constraint"] = c.implicit() ? "implicit" : c.constrained() ? "explicit" : "none";
    e["nbodies"] = c.nbodies;
    e["first_body"] = c.firstBody;
    e["bodies"] = bodies;
    e["joints"] = joints;
    e["nq"] = c.nq;
    e["nv"] = c.nv;
    e["nq_independent"] = c.nyq;
    e["nv_independent"] = c.ny;
    e["q0"] = c.q0;
    e["v0"] = c.v0;
    e["y0"] = c.y0;
    e["yq0"] = c.yq0;
    e["independent"] = indep;
    e["dependent"] = dep;
    e["constraint_rows"] = c.constraintRows;
    e["selected_rows"] = c.selectedRows.size();
    e["loops"] = loops;
    e["relations"] = relations;
    if (c.constrained() && !c.implicit() && c.G.rows() == c.nv && c.G.cols() == c.ny) {
      json G = json::array();
      for (int r = 0; r < c.nv; ++r) {
        json row = json::array();
        for (int j = 0; j < c.ny; ++j) row.push_back(c.G(r, j));
        G.push_back(row);
      }
      e["G_constant"] = G;  // rows: the cluster's velocity coordinates, columns: independent
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace clusterdyn::cli
