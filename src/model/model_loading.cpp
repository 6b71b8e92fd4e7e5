// Models from URDF+ and MJCF files: the only functions of the model builders that read a file
// (parseModelFile dispatches to urdf_parser.cpp or mjcf_parser.cpp by extension / root
// element); the builders themselves work on a parsed UrdfDescription.
#include "clusterdyn/cluster_model.hpp"
#include "clusterdyn/mjcf.hpp"
#include "clusterdyn/model_builder.hpp"
#include "clusterdyn/urdf.hpp"

namespace clusterdyn {

Model loadTreeModel(const std::string& path, const ModelOptions& options) {
  return buildTreeModel(parseModelFile(path), options);
}

ClusterModel loadModel(const std::string& path, const ModelOptions& options) {
  return buildClusterModel(parseModelFile(path), options);
}

}  // namespace clusterdyn
