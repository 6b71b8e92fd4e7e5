// C API: cluster tree and independent coordinates, queries (clusterdyn.h, "Cluster tree and
// independent coordinates: queries").
#include "capi_internal.hpp"

using namespace cdyn_internal;

extern "C" {

CDYN_INT_QUERY(cdyn_model_nclusters, static_cast<int>(model->cm.clusters.size()))
CDYN_INT_QUERY(cdyn_model_ny, model->cm.ny)
CDYN_INT_QUERY(cdyn_model_nyq, model->cm.nyq)
CDYN_INT_QUERY(cdyn_model_nloops, static_cast<int>(model->cm.loops.size()))
CDYN_INT_QUERY(cdyn_model_nrelations, static_cast<int>(model->cm.relations.size()))

cdyn_status cdyn_model_independent_position_name(const cdyn_model* model, int i,
                                                 const char** name) {
  CDYN_CHECK_MODEL(model);
  return nameAt(model, model->cm.independentPositionNames, i, name);
}

cdyn_status cdyn_model_independent_velocity_name(const cdyn_model* model, int i,
                                                 const char** name) {
  CDYN_CHECK_MODEL(model);
  return nameAt(model, model->cm.independentVelocityNames, i, name);
}

cdyn_status cdyn_model_independent_position_index(const cdyn_model* model, const char* name,
                                                  int* i) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, i, model->cm.independentPositionNames);
}

cdyn_status cdyn_model_independent_velocity_index(const cdyn_model* model, const char* name,
                                                  int* i) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, i, model->cm.independentVelocityNames);
}

cdyn_status cdyn_model_independent_indices(const cdyn_model* model, int* position_index, int nyq,
                                           int* velocity_index, int ny) {
  CDYN_CHECK_MODEL(model);
  const cd::ClusterModel& cm = model->cm;
  const bool hasPosition = !(position_index == nullptr && nyq == 0);
  const bool hasVelocity = !(velocity_index == nullptr && ny == 0);
  if ((hasPosition && nyq != cm.nyq) || (hasVelocity && ny != cm.ny))
    return refuse(CDYN_ERR_INVALID_SIZE,
                  "cdyn_model_independent_indices: nyq is not the model's nyq or ny is not its ny");
  if ((hasPosition && nyq > 0 && position_index == nullptr) ||
      (hasVelocity && ny > 0 && velocity_index == nullptr))
    return CDYN_ERR_NULL_POINTER;
  if (hasPosition) std::copy_n(cm.independentPosition.data(), cm.nyq, position_index);
  if (hasVelocity) std::copy_n(cm.independentVelocity.data(), cm.ny, velocity_index);
  return CDYN_OK;
}

cdyn_status cdyn_model_reference_configuration(const cdyn_model* model, double* q, int n) {
  CDYN_CHECK_MODEL(model);
  const cd::ClusterModel& cm = model->cm;
  if (n != cm.treeModel.nq)
    return refuse(CDYN_ERR_INVALID_SIZE, "cdyn_model_reference_configuration: n is not nq");
  if (n > 0 && q == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_reference_configuration: q is NULL");
  copyOut(cm.qReference, q);
  return CDYN_OK;
}

cdyn_status cdyn_model_cluster_name(const cdyn_model* model, int cluster, const char** name) {
  CDYN_CHECK_MODEL(model);
  if (name == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_cluster_name: name is NULL");
  const auto& clusters = model->cm.clusters;
  if (cluster < 0 || cluster >= static_cast<int>(clusters.size()))
    return refuse(CDYN_ERR_INVALID_INDEX, "cdyn_model_cluster_name: cluster is out of range");
  *name = clusters[cluster].name.c_str();
  return CDYN_OK;
}

namespace {
/// The cluster names of a model, indexable like a vector of strings.
struct ClusterNames {
  const std::vector<cd::Cluster>& clusters;
  std::size_t size() const { return clusters.size(); }
  const std::string& operator[](std::size_t i) const { return clusters[i].name; }
};
}  // namespace

cdyn_status cdyn_model_cluster_index(const cdyn_model* model, const char* name, int* cluster) {
  CDYN_CHECK_MODEL(model);
  return findIndex(name, cluster, ClusterNames{model->cm.clusters});
}

cdyn_status cdyn_model_cluster_info(const cdyn_model* model, int cluster, int* parent,
                                    int* output_body, int* first_body, int* nbodies, int* kind) {
  CDYN_CHECK_MODEL(model);
  const auto& clusters = model->cm.clusters;
  if (cluster < 0 || cluster >= static_cast<int>(clusters.size()))
    return refuse(CDYN_ERR_INVALID_INDEX, "cdyn_model_cluster_info: cluster is out of range");
  const cd::Cluster& c = clusters[cluster];
  if (parent) *parent = c.parent;
  if (output_body) *output_body = c.outputBody;
  if (first_body) *first_body = c.firstBody;
  if (nbodies) *nbodies = c.nbodies;
  if (kind)
    *kind = c.implicit()      ? CDYN_CLUSTER_IMPLICIT
            : c.constrained() ? CDYN_CLUSTER_EXPLICIT
                              : CDYN_CLUSTER_UNCONSTRAINED;
  return CDYN_OK;
}

cdyn_status cdyn_model_cluster_coordinates(const cdyn_model* model, int cluster, int* idx_q,
                                           int* nq, int* idx_v, int* nv, int* idx_yq, int* nyq,
                                           int* idx_y, int* ny) {
  CDYN_CHECK_MODEL(model);
  const auto& clusters = model->cm.clusters;
  if (cluster < 0 || cluster >= static_cast<int>(clusters.size()))
    return refuse(CDYN_ERR_INVALID_INDEX,
                  "cdyn_model_cluster_coordinates: cluster is out of range");
  const cd::Cluster& c = clusters[cluster];
  if (idx_q) *idx_q = c.q0;
  if (nq) *nq = c.nq;
  if (idx_v) *idx_v = c.v0;
  if (nv) *nv = c.nv;
  if (idx_yq) *idx_yq = c.yq0;
  if (nyq) *nyq = c.nyq;
  if (idx_y) *idx_y = c.y0;
  if (ny) *ny = c.ny;
  return CDYN_OK;
}

cdyn_status cdyn_model_body_cluster(const cdyn_model* model, int body, int* cluster) {
  CDYN_CHECK_MODEL(model);
  if (cluster == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_model_body_cluster: cluster is NULL");
  if (body < 0 || body >= model->cm.treeModel.nbodies)
    return refuse(CDYN_ERR_INVALID_INDEX, "cdyn_model_body_cluster: body is out of range");
  *cluster = model->cm.bodyCluster[body];
  return CDYN_OK;
}

cdyn_status cdyn_model_describe(const cdyn_model* model, char* buf, size_t len, size_t* needed) {
  CDYN_CHECK_MODEL(model);
  return textOut(model->treeDescription, buf, len, needed);
}

cdyn_status cdyn_model_describe_clusters(const cdyn_model* model, char* buf, size_t len,
                                         size_t* needed) {
  CDYN_CHECK_MODEL(model);
  return textOut(model->clusterDescription, buf, len, needed);
}

cdyn_status cdyn_model_cluster_tree_dot(const cdyn_model* model, char* buf, size_t len,
                                        size_t* needed) {
  CDYN_CHECK_MODEL(model);
  return textOut(model->clusterDot, buf, len, needed);
}

}  // extern "C"
