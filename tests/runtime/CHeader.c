/*===- CHeader.c - encrt.h compiles as plain C ----------------------------===*/
#include "encrt/encrt.h"

#include <stddef.h>

/* Loads nothing: exercises the declarations from C. Returns 0 on success. */
int encrt_test_c_header(void) {
  encrt_model_options options;
  encrt_model *model = NULL;
  encrt_status *status;
  int ok;
  encrt_model_options_initialize(&options);
  status = encrt_model_load(NULL, &options, &model);
  ok = encrt_status_get_code(status) == ENCRT_INVALID_ARGUMENT && model == NULL &&
       encrt_version() != NULL;
  encrt_status_free(status);
  return ok ? 0 : 1;
}
