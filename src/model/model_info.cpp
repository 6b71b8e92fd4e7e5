#include "clusterdyn/model_info.hpp"

#include <cstdio>
#include <sstream>

namespace clusterdyn {

std::string describeModel(const Model& model) {
  std::ostringstream os;
  os << "model '" << model.name << "': " << model.nbodies << " bodies, nq = " << model.nq
     << ", nv = " << model.nv << ", mass = " << model.totalMass() << " kg, root link '"
     << model.rootLink << "'\n";
  os << "  body  link                          joint                          type       parent"
        "  q     v     mass\n";
  char line[256];
  for (int i = 0; i < model.nbodies; ++i) {
    const std::string parent = model.parent[i] >= 0 ? std::to_string(model.parent[i]) : "world";
    std::snprintf(line, sizeof line, "  %-4d  %-28s  %-29s  %-9s  %-6s  %-4d  %-4d  %.6g\n", i,
                  model.bodyNames[i].c_str(), model.jointNames[i].c_str(),
                  jointTypeName(model.joints[i].type), parent.c_str(), model.idx_q[i],
                  model.idx_v[i], model.inertias[i].mass);
    os << line;
  }
  int fused = 0;
  for (const Frame& f : model.frames)
    if (!f.isBody) ++fused;
  if (fused > 0) {
    os << "  frames fused into bodies:\n";
    for (const Frame& f : model.frames) {
      if (f.isBody) continue;
      os << "    " << f.name << " -> "
         << (f.body >= 0 ? model.bodyNames[f.body] : std::string("world")) << "\n";
    }
  }
  return os.str();
}

}  // namespace clusterdyn
