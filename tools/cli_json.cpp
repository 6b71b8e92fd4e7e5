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

}  // namespace clusterdyn::cli
