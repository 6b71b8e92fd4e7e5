// The tree model from a URDF+ or MJCF file: the only function of the model builders that reads
// a file (parseModelFile dispatches to urdf_parser.cpp or mjcf_parser.cpp by extension / root
// element); the builders themselves work on a parsed UrdfDescription. The cluster model's
// loadModel is the cluster layer's (cluster/cluster_loading.cpp).
#include "clusterdyn/mjcf.hpp"
#include "clusterdyn/model_builder.hpp"
#include "clusterdyn/urdf.hpp"

namespace clusterdyn {

Model loadTreeModel(const std::string& path, const ModelOptions& options) {
  return buildTreeModel(parseModelFile(path), options);
}

}  // namespace clusterdyn
