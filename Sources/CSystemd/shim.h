#ifndef SAVINGSD_CSYSTEMD_SHIM_H
#define SAVINGSD_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#endif
