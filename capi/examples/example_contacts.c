/* clusterdyn C API example with contacts: a quadruped standing on its four feet. Builds a
 * constraint set (3D point contacts), computes the Delassus matrix J H^-1 J^T, its damped
 * inverse, and the constrained forward dynamics with constrainedABA (Sathya & Carpentier 2024),
 * checked against proxPV.
 * Usage: example_contacts path/to/cd_quadruped.urdf                                          */
#include <clusterdyn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Prints the message of a failed call and exits. */
static void check(cdyn_status s, const char* message, const char* what) {
  if (s == CDYN_OK) return;
  fprintf(stderr, "%s failed: %s: %s\n", what, cdyn_status_string(s), message ? message : "");
  exit(1);
}

static double* zeros(int n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

int main(int argc, char** argv) {
  static const char* const feet[4] = {"lf_foot", "rf_foot", "lh_foot", "rh_foot"};
  char err[512];
  cdyn_model* model = NULL;
  cdyn_workspace* ws = NULL;
  cdyn_constraint_set* set = NULL;
  cdyn_constraint_workspace* cws = NULL;
  cdyn_proximal_settings settings;
  cdyn_proximal_result result;
  int nq, nv, ny, nyq, m, i, j, k;
  const char* name;
  double *q, *v, *y, *ydot, *tau, *D, *Dinv, *ydd, *qdd, *lambda, *ydd2, *lambda2;
  double err_inv = 0.0, err_pv = 0.0, rho = 1e-6, fz = 0.0, mass;

  if (argc < 2) {
    fprintf(stderr, "usage: %s robot.urdf\n", argv[0]);
    return 2;
  }
  if (cdyn_model_load(CDYN_ABI_VERSION, argv[1], 0, NULL, &model, err, sizeof err) != CDYN_OK) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], err);
    return 1;
  }
  check(cdyn_workspace_create(model, &ws), NULL, "cdyn_workspace_create");
  check(cdyn_model_nq(model, &nq), NULL, "cdyn_model_nq");
  check(cdyn_model_nv(model, &nv), NULL, "cdyn_model_nv");
  check(cdyn_model_ny(model, &ny), NULL, "cdyn_model_ny");
  check(cdyn_model_nyq(model, &nyq), NULL, "cdyn_model_nyq");
  check(cdyn_model_total_mass(model, &mass), NULL, "cdyn_model_total_mass");

  /* 1. The constraints: a 3D point contact at each foot (frame B = the foot's world pose at the
   *    reference configuration), rows in the foot's axes. Then the per-thread workspace. */
  check(cdyn_constraint_set_create(model, &set), NULL, "cdyn_constraint_set_create");
  for (k = 0; k < 4; ++k)
    check(cdyn_constraint_set_add_contact(set, feet[k], CDYN_CONSTRAINT_POINT, CDYN_LOCAL, NULL,
                                          NULL),
          cdyn_constraint_set_last_error(set), "cdyn_constraint_set_add_contact");
  check(cdyn_constraint_set_nrows(set, &m), NULL, "cdyn_constraint_set_nrows");
  check(cdyn_constraint_workspace_create(model, set, &cws), NULL, "constraint workspace");
  printf("robot with nq = %d, nv = %d, ny = %d; %d contact rows\n", nq, nv, ny, m);

  /* 2. A closed state: the reference configuration, every independent velocity 0.2. */
  q = zeros(nq);
  v = zeros(nv);
  y = zeros(nyq);
  ydot = zeros(ny);
  check(cdyn_model_reference_configuration(model, q, nq), NULL, "reference configuration");
  check(cdyn_spanning_to_independent(model, ws, q, nq, v, nv, y, nyq, ydot, ny),
        cdyn_workspace_last_error(ws), "cdyn_spanning_to_independent");
  for (i = 0; i < ny; ++i) ydot[i] = 0.2;
  check(cdyn_independent_to_spanning(model, ws, y, nyq, ydot, ny, NULL, 0, q, nq, v, nv),
        cdyn_workspace_last_error(ws), "cdyn_independent_to_spanning");

  /* 3. Delassus matrix D = J H^-1 J^T (m x m, column-major) and (D + rho I)^-1. */
  D = zeros(m * m);
  Dinv = zeros(m * m);
  check(cdyn_delassus_matrix(set, cws, q, D, m), cdyn_constraint_workspace_last_error(cws),
        "cdyn_delassus_matrix");
  check(cdyn_damped_delassus_inverse(set, cws, q, rho, Dinv, m),
        cdyn_constraint_workspace_last_error(cws), "cdyn_damped_delassus_inverse");
  for (i = 0; i < m; ++i)
    for (j = 0; j < m; ++j) {
      double r = (i == j ? -1.0 : 0.0) + rho * Dinv[i + j * m];
      for (k = 0; k < m; ++k) r += D[i + k * m] * Dinv[k + j * m];
      err_inv = fmax(err_inv, fabs(r));
    }
  printf("D[0][0] = %.6f, max |(D + rho I) Dinv - I| = %.1e\n", D[0], err_inv);

  /* 4. Constrained forward dynamics, no efforts: the feet hold the robot against gravity. */
  tau = zeros(ny);
  ydd = zeros(ny);
  qdd = zeros(nv);
  lambda = zeros(m);
  ydd2 = zeros(ny);
  lambda2 = zeros(m);
  check(cdyn_proximal_settings_default(&settings), NULL, "settings");
  check(cdyn_constrained_aba(set, cws, q, v, tau, NULL, &settings, ydd, qdd, lambda, m, &result),
        cdyn_constraint_workspace_last_error(cws), "cdyn_constrained_aba");
  printf("constrainedABA: %d iterations, residual %.1e\n", result.iterations, result.residual);
  for (i = 0; i < m; ++i) {
    check(cdyn_constraint_set_row_name(set, i, &name), NULL, "row name");
    printf("  lambda %-22s = % 10.4f N\n", name, lambda[i]);
  }
  check(cdyn_prox_pv(set, cws, q, v, tau, NULL, &settings, ydd2, NULL, lambda2, m, NULL),
        cdyn_constraint_workspace_last_error(cws), "cdyn_prox_pv");
  for (i = 0; i < ny; ++i) err_pv = fmax(err_pv, fabs(ydd[i] - ydd2[i]));
  for (i = 2; i < m; i += 3) fz += lambda[i];
  printf("max |ydd(constrainedABA) - ydd(proxPV)| = %.1e\n", err_pv);
  printf("sum of the normal forces %.3f N, weight %.3f N\n", fz, mass * 9.81);

  /* 5. Errors are values: a buffer sized for another set is refused. */
  if (cdyn_delassus_matrix(set, cws, q, D, m - 1) == CDYN_ERR_INVALID_SIZE)
    printf("expected error: %s\n", cdyn_constraint_workspace_last_error(cws));

  free(q);
  free(v);
  free(y);
  free(ydot);
  free(tau);
  free(D);
  free(Dinv);
  free(ydd);
  free(qdd);
  free(lambda);
  free(ydd2);
  free(lambda2);
  check(cdyn_constraint_workspace_free(cws), NULL, "cdyn_constraint_workspace_free");
  check(cdyn_constraint_set_free(set), NULL, "cdyn_constraint_set_free");
  check(cdyn_workspace_free(ws), NULL, "cdyn_workspace_free");
  check(cdyn_model_free(model), NULL, "cdyn_model_free");
  return err_inv < 1e-6 && err_pv < 1e-8 ? 0 : 1;
}
