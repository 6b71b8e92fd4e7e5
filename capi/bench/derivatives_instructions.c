/* Instructions per state of the batched derivatives (docs/derivatives.md, "C, Fortran and
 * Python"), independent of machine load: run under valgrind --tool=callgrind with N and 3N states
 * and divide the difference of the totals by 2N (the set-up cancels).
 *   cc -O2 capi/bench/derivatives_instructions.c -Icapi -Lbuild/capi -lclusterdyn -lm -o dinstr
 *   LD_LIBRARY_PATH=build/capi valgrind --tool=callgrind ./dinstr MODEL.urdf ce_aba N
 * FUNCTION: ce_aba | ce_rnea | aba | rnea (cdyn_batch_<FUNCTION>_derivatives, one derivative
 * workspace, row-major). States: the reference configuration with velocities v = G ydot,
 * ydot_k = 0.3 - 0.05 k (one closed state, repeated). */
#include <clusterdyn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc < 4 || atoi(argv[3]) <= 0) {
    fprintf(stderr, "usage: %s MODEL.urdf ce_aba|ce_rnea|aba|rnea N\n", argv[0]);
    return 2;
  }
  const int n = atoi(argv[3]);
  cdyn_model* m = NULL;
  char err[512];
  cdyn_set_log_level(CDYN_LOG_OFF);
  if (cdyn_model_load(CDYN_ABI_VERSION, argv[1], 0, NULL, &m, err, sizeof err) != CDYN_OK) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  int nq, nv, ny, nyq, k, i;
  cdyn_model_nq(m, &nq);
  cdyn_model_nv(m, &nv);
  cdyn_model_ny(m, &ny);
  cdyn_model_nyq(m, &nyq);
  cdyn_workspace* ws = NULL;
  cdyn_derivative_workspace* dws = NULL;
  cdyn_workspace_create(m, &ws);
  cdyn_derivative_workspace_create(m, &dws);
  double* q = calloc(nq, sizeof(double));
  double* v = calloc(nv, sizeof(double));
  double* y = calloc(nyq, sizeof(double));
  double* yd = calloc(ny, sizeof(double));
  cdyn_model_reference_configuration(m, q, nq);
  cdyn_spanning_to_independent(m, ws, q, nq, v, nv, y, nyq, yd, ny);
  for (k = 0; k < ny; ++k) yd[k] = 0.3 - 0.05 * k;
  if (cdyn_independent_to_spanning(m, ws, y, nyq, yd, ny, q, nq, q, nq, v, nv) != CDYN_OK) {
    fprintf(stderr, "%s\n", cdyn_workspace_last_error(ws));
    return 1;
  }
  const int tree = strcmp(argv[2], "aba") == 0 || strcmp(argv[2], "rnea") == 0;
  const int nx = tree ? nv : ny, nn = nx * nx;
  double* Q = malloc(sizeof(double) * n * nq);
  double* V = malloc(sizeof(double) * n * nv);
  double* X = malloc(sizeof(double) * n * nx);
  double* Y = malloc(sizeof(double) * n * nx);
  double* A = malloc(sizeof(double) * n * nn);
  double* B = malloc(sizeof(double) * n * nn);
  double* C = malloc(sizeof(double) * n * nn);
  for (i = 0; i < n; ++i) {
    memcpy(Q + i * nq, q, sizeof(double) * nq);
    memcpy(V + i * nv, v, sizeof(double) * nv);
    for (k = 0; k < nx; ++k) X[i * nx + k] = 0.1 * (k % 5) - 0.2;
  }
  cdyn_derivative_workspace* one[1] = {dws};
  cdyn_status s;
  if (strcmp(argv[2], "ce_aba") == 0)
    s = cdyn_batch_ce_aba_derivatives(m, one, 1, n, CDYN_BATCH_ROW_MAJOR, Q, nq, V, nv, X, nx, NULL,
                                      0, Y, nx, A, nn, B, nn, C, nn, NULL);
  else if (strcmp(argv[2], "ce_rnea") == 0)
    s = cdyn_batch_ce_rnea_derivatives(m, one, 1, n, CDYN_BATCH_ROW_MAJOR, Q, nq, V, nv, X, nx,
                                       NULL, 0, Y, nx, A, nn, B, nn, C, nn, NULL);
  else if (strcmp(argv[2], "aba") == 0)
    s = cdyn_batch_aba_derivatives(m, one, 1, n, CDYN_BATCH_ROW_MAJOR, Q, nq, V, nv, X, nx, NULL, 0,
                                   Y, nx, A, nn, B, nn, C, nn, NULL);
  else
    s = cdyn_batch_rnea_derivatives(m, one, 1, n, CDYN_BATCH_ROW_MAJOR, Q, nq, V, nv, X, nx, NULL,
                                    0, Y, nx, A, nn, B, nn, C, nn, NULL);
  if (s != CDYN_OK) {
    fprintf(stderr, "%s\n", cdyn_derivative_workspace_last_error(dws));
    return 1;
  }
  printf("%s %s: %d states, A[0] = %.17g\n", argv[1], argv[2], n, A[0]);
  cdyn_derivative_workspace_free(dws);
  cdyn_workspace_free(ws);
  cdyn_model_free(m);
  return 0;
}
