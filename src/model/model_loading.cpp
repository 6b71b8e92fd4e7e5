// Models from URDF+ files: the only functions of the model builders that read a file
// (parseUrdfFile, urdf_parser.cpp); the builders themselves work on a parsed UrdfDescription.
#include "clusterdyn/cluster_model.hpp"
#include "clusterdyn/model_builder.hpp"
#include "clusterdyn/urdf.hpp"

namespace clusterdyn {

Model loadTreeModel(const std::string& path, const ModelOptions& options) {
  return buildTreeModel(parseUrdfFile(path), options);
}

ClusterModel loadModel(const std::string& path, const ModelOptions& options) {
  return buildClusterModel(parseUrdfFile(path), options);
}

}  // namespace clusterdyn
