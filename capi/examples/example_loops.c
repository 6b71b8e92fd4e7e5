/* clusterdyn C API example with kinematic loops: the cluster tree, independent coordinates,
 * loop closure, and forward / inverse dynamics through the loops (constraint embedding).
 * Usage: example_loops path/to/cd_four_bar.urdf   (any URDF+ robot works)                */
#include <clusterdyn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Prints the message of a failed call and exits. */
static void check(cdyn_status s, const cdyn_workspace* ws, const char* what) {
  if (s == CDYN_OK) return;
  fprintf(stderr, "%s failed: %s: %s\n", what, cdyn_status_string(s),
          ws ? cdyn_workspace_last_error(ws) : "");
  exit(1);
}

static double* zeros(int n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

int main(int argc, char** argv) {
  char err[512];
  cdyn_model* model = NULL;
  cdyn_workspace* ws = NULL;
  int nq, nv, ny, nyq, nclusters, i, j, k, kind, idx_yq, nyq_k, iterations, *vindex;
  size_t needed;
  char* text;
  const char* name;
  double *y, *ydot, *q, *v, *tau, *ydd, *tau2, *qdd, *H, *C, *G, *g, *qopen, *vopen;
  double residual, err_rnea = 0.0, err_h = 0.0, err_g = 0.0;

  if (argc < 2) {
    fprintf(stderr, "usage: %s robot.urdf\n", argv[0]);
    return 2;
  }
  /* 1. Load: the spanning tree of the URDF and its cluster tree (loops, couplings, mimics). */
  if (cdyn_model_load(CDYN_ABI_VERSION, argv[1], 0, NULL, &model, err, sizeof err) != CDYN_OK) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], err);
    return 1;
  }
  check(cdyn_workspace_create(model, &ws), NULL, "cdyn_workspace_create");
  check(cdyn_model_nq(model, &nq), NULL, "cdyn_model_nq");
  check(cdyn_model_nv(model, &nv), NULL, "cdyn_model_nv");
  check(cdyn_model_ny(model, &ny), NULL, "cdyn_model_ny");
  check(cdyn_model_nyq(model, &nyq), NULL, "cdyn_model_nyq");
  check(cdyn_model_nclusters(model, &nclusters), NULL, "cdyn_model_nclusters");
  printf("spanning nq = %d, nv = %d; independent nyq = %d, ny = %d; %d clusters\n", nq, nv, nyq, ny,
         nclusters);

  /* 2. The cluster tree as text (size query first), and the independent coordinates. */
  check(cdyn_model_describe_clusters(model, NULL, 0, &needed), NULL, "describe");
  text = malloc(needed);
  check(cdyn_model_describe_clusters(model, text, needed, NULL), NULL, "describe");
  printf("%s", text);
  free(text);
  vindex = malloc(sizeof(int) * (size_t)(ny > 0 ? ny : 1));
  check(cdyn_model_independent_indices(model, NULL, 0, vindex, ny), NULL, "independent indices");
  for (i = 0; i < ny; ++i) {
    check(cdyn_model_independent_velocity_name(model, i, &name), NULL, "independent name");
    printf("ydot[%d] = v[%d] (%s)\n", i, vindex[i], name);
  }

  /* 3. Position level: y of the reference configuration, the coordinates of every implicit
   *    (loop) cluster turned by 0.3 rad; the loop closure gives the spanning q, and v = G ydot. */
  y = zeros(nyq);
  ydot = zeros(ny);
  q = zeros(nq);
  v = zeros(nv);
  check(cdyn_model_reference_configuration(model, q, nq), NULL, "reference configuration");
  check(cdyn_spanning_to_independent(model, ws, q, nq, v, nv, y, nyq, ydot, ny), ws,
        "cdyn_spanning_to_independent");
  for (k = 0; k < nclusters; ++k) {
    check(cdyn_model_cluster_info(model, k, NULL, NULL, NULL, NULL, &kind), NULL, "cluster info");
    check(cdyn_model_cluster_coordinates(model, k, NULL, NULL, NULL, NULL, &idx_yq, &nyq_k, NULL,
                                         NULL),
          NULL, "cluster coordinates");
    if (kind == CDYN_CLUSTER_IMPLICIT)
      for (i = idx_yq; i < idx_yq + nyq_k; ++i) y[i] += 0.3;
  }
  for (i = 0; i < ny; ++i) ydot[i] = 1.0;
  check(cdyn_independent_to_spanning(model, ws, y, nyq, ydot, ny, NULL, 0, q, nq, v, nv), ws,
        "cdyn_independent_to_spanning");
  check(cdyn_last_loop_closure(model, ws, &iterations, &residual), ws, "cdyn_last_loop_closure");
  printf("loop closure: %d Newton iterations, residual %.1e\n", iterations, residual);
  for (i = 0; i < nq; ++i) {
    check(cdyn_model_position_name(model, i, &name), NULL, "position name");
    printf("  q[%d] %-20s = % .6f\n", i, name, q[i]);
  }

  /* 4. Forward dynamics in independent coordinates (CE-ABA), efforts 0.1 on every independent
   *    coordinate; inverse dynamics (CE-RNEA) of the result gives them back. */
  tau = zeros(ny);
  ydd = zeros(ny);
  tau2 = zeros(ny);
  qdd = zeros(nv);
  for (i = 0; i < ny; ++i) tau[i] = 0.1;
  check(cdyn_ce_aba(model, ws, q, nq, v, nv, tau, ny, NULL, 0, ydd, ny, qdd, nv), ws,
        "cdyn_ce_aba");
  check(cdyn_ce_rnea(model, ws, q, nq, v, nv, ydd, ny, NULL, 0, tau2, ny, NULL, 0), ws,
        "cdyn_ce_rnea");
  for (i = 0; i < ny; ++i) err_rnea = fmax(err_rnea, fabs(tau2[i] - tau[i]));
  printf("ydd[0] = %.9f, max |ce_rnea(ce_aba(tau)) - tau| = %.1e\n", ny > 0 ? ydd[0] : 0.0,
         err_rnea);

  /* 5. The same dynamics as matrices: H ydd + C = tau; spanning accelerations qdd = G ydd + g. */
  H = zeros(ny * ny);
  C = zeros(ny);
  G = zeros(nv * ny);
  g = zeros(nv);
  check(cdyn_cluster_mass_matrix(model, ws, q, nq, H, ny), ws, "cdyn_cluster_mass_matrix");
  check(cdyn_cluster_bias(model, ws, q, nq, v, nv, C, ny), ws, "cdyn_cluster_bias");
  check(cdyn_constraint_matrices(model, ws, q, nq, v, nv, G, nv, g, nv), ws,
        "cdyn_constraint_matrices");
  for (i = 0; i < ny; ++i) {
    double r = C[i] - tau[i];
    for (j = 0; j < ny; ++j) r += H[i + j * ny] * ydd[j];
    err_h = fmax(err_h, fabs(r));
  }
  for (i = 0; i < nv; ++i) {
    double r = g[i] - qdd[i];
    for (j = 0; j < ny; ++j) r += G[i + j * nv] * ydd[j];
    err_g = fmax(err_g, fabs(r));
  }
  printf("max |H ydd + C - tau| = %.1e, max |G ydd + g - qdd| = %.1e\n", err_h, err_g);

  /* 6. Errors are values: a spanning state off the loop constraints is refused (the message
   *    names the cluster); cdyn_project_to_constraints brings it back onto them. */
  qopen = zeros(nq);
  vopen = zeros(nv);
  for (i = 0; i < nq; ++i) qopen[i] = q[i] + (nv > ny ? 0.05 : 0.0);
  for (i = 0; i < nv; ++i) vopen[i] = v[i] + 0.5;
  check(cdyn_normalize_configuration(model, ws, qopen, nq), ws, "normalize");
  if (cdyn_ce_aba(model, ws, qopen, nq, vopen, nv, tau, ny, NULL, 0, ydd, ny, NULL, 0) ==
      CDYN_ERR_CONSTRAINT_FAILURE)
    printf("expected error: %s\n", cdyn_workspace_last_error(ws));
  check(cdyn_project_to_constraints(model, ws, qopen, nq, vopen, nv, qopen, nq, vopen, nv), ws,
        "cdyn_project_to_constraints");
  check(cdyn_ce_aba(model, ws, qopen, nq, vopen, nv, tau, ny, NULL, 0, ydd, ny, NULL, 0), ws,
        "cdyn_ce_aba after the projection");
  printf("after cdyn_project_to_constraints: ydd[0] = %.9f\n", ny > 0 ? ydd[0] : 0.0);

  free(vindex);
  free(y);
  free(ydot);
  free(q);
  free(v);
  free(tau);
  free(ydd);
  free(tau2);
  free(qdd);
  free(H);
  free(C);
  free(G);
  free(g);
  free(qopen);
  free(vopen);
  check(cdyn_workspace_free(ws), NULL, "cdyn_workspace_free");
  check(cdyn_model_free(model), NULL, "cdyn_model_free");
  return err_rnea < 1e-9 && err_h < 1e-9 && err_g < 1e-9 ? 0 : 1;
}
