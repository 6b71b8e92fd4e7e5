// The cluster model from a URDF+ or MJCF file (parseModelFile, then buildClusterModel).
#include "clusterdyn/cluster_model.hpp"
#include "clusterdyn/mjcf.hpp"

namespace clusterdyn {

ClusterModel loadModel(const std::string& path, const ModelOptions& options) {
  return buildClusterModel(parseModelFile(path), options);
}

}  // namespace clusterdyn
