/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The machine region: Perun's keys (host, system, release, architecture,
 * cpu {total, physical, model}, memory {total_ram, swap}) plus the probe
 * calibration collect used and the name the user gave the machine.  */
#include "config.h"

#define PR_FMT "machine"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "profile/machine.h"
#include "profile/profile.h"
#include "util/log.h"
#include "util/strbuf.h"

/* The "model name" of /proc/cpuinfo and the number of distinct cores
 * ("physical id" x "core id"); model "" and cores 0 when unreadable.  */
static void cpu_info(char *model, size_t n, long *physical)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512], seen[256][32];
	size_t nseen = 0, i;
	long phys = -1;

	*model = '\0';
	*physical = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');
		if (!v)
			continue;
		v++;
		while (*v == ' ' || *v == '\t')
			v++;
		v[strcspn(v, "\n")] = '\0';
		if (!strncmp(line, "model name", 10) && !*model) {
			snprintf(model, n, "%s", v);
		} else if (!strncmp(line, "physical id", 11)) {
			phys = atol(v);
		} else if (!strncmp(line, "core id", 7)) {
			char key[32];
			snprintf(key, sizeof(key), "%ld:%ld", phys, atol(v));
			for (i = 0; i < nseen && strcmp(seen[i], key); i++)
				;
			if (i == nseen && nseen < 256)
				snprintf(seen[nseen++], sizeof(seen[0]), "%s", key);
		}
	}
	fclose(f);
	*physical = (long)nseen;
}

struct json_object *machine_region(struct json_object *calibration, const char *name)
{
	struct json_object *m = json_object_new_object(), *cpu = json_object_new_object(),
			   *mem = json_object_new_object();
	struct utsname u;
	struct sysinfo si;
	char model[256];
	long physical, total = sysconf(_SC_NPROCESSORS_ONLN);

	memset(&u, 0, sizeof(u));
	uname(&u);
	if (name && *name)
		json_object_object_add(m, "name", json_object_new_string(name));
	json_object_object_add(m, "host", json_object_new_string(u.nodename));
	json_object_object_add(m, "system", json_object_new_string(u.sysname));
	json_object_object_add(m, "release", json_object_new_string(u.release));
	json_object_object_add(m, "architecture", json_object_new_string(u.machine));
	cpu_info(model, sizeof(model), &physical);
	json_object_object_add(cpu, "total", json_object_new_int64(total > 0 ? total : 0));
	json_object_object_add(cpu, "physical", json_object_new_int64(physical));
	json_object_object_add(cpu, "model", json_object_new_string(model));
	json_object_object_add(m, "cpu", cpu);
	if (sysinfo(&si) == 0) {
		json_object_object_add(mem, "total_ram",
				       json_object_new_int64((int64_t)si.totalram * si.mem_unit));
		json_object_object_add(mem, "swap",
				       json_object_new_int64((int64_t)si.totalswap * si.mem_unit));
	}
	json_object_object_add(m, "memory", mem);
	json_object_object_add(m, "calibration", calibration);
	return m;
}

static struct json_object *region(const struct profile *p)
{
	struct json_object *m = NULL;

	if (!p->root || !json_object_object_get_ex(p->root, "machine", &m) ||
	    !json_object_is_type(m, json_type_object))
		return NULL;
	return m;
}

int machine_known(const struct profile *p)
{
	return region(p) != NULL;
}

/* The value at a dotted path inside the region as text ("" when missing).  */
static const char *field(struct json_object *m, const char *path)
{
	char buf[64], *save = NULL, *k;
	struct json_object *o = m;

	snprintf(buf, sizeof(buf), "%s", path);
	for (k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save))
		if (!json_object_is_type(o, json_type_object) ||
		    !json_object_object_get_ex(o, k, &o))
			o = NULL;
	return o ? json_object_get_string(o) : "";
}

/* What makes a machine: the same host name on other hardware or another
 * kernel times differently.  */
static const char *const identity[] = {"host",	    "system",	   "release",	       "architecture",
				       "cpu.model", "cpu.total", "memory.total_ram", NULL};

int machine_same(const struct profile *a, const struct profile *b)
{
	struct json_object *ma = region(a), *mb = region(b);
	size_t i;

	if (!ma || !mb)
		return 1;
	if (*field(ma, "name") || *field(mb, "name"))
		return !strcmp(field(ma, "name"), field(mb, "name"));
	for (i = 0; identity[i]; i++)
		if (strcmp(field(ma, identity[i]), field(mb, identity[i])))
			return 0;
	return 1;
}

char *machine_describe(const struct profile *p)
{
	struct json_object *m = region(p);
	double ram;

	if (!m)
		return xstrdup("");
	if (*field(m, "name"))
		return xstrdup(field(m, "name"));
	ram = atof(field(m, "memory.total_ram")) / (1024.0 * 1024 * 1024);
	return xstrfmt("%s (%s, %s x %s, %.1f GiB, %s %s)", field(m, "host"),
		       field(m, "architecture"), field(m, "cpu.total"),
		       *field(m, "cpu.model") ? field(m, "cpu.model") : "cpu", ram,
		       field(m, "system"), field(m, "release"));
}
