"""Interoperation: pdi names and archived documents in the formats and syntaxes of other tools.

* :mod:`pdi.interop.aliases`: browser fragment syntaxes on a PDI (WICG text
  directives ``#:~:text=``, Media Fragments ``#t=`` and ``#xywh=``) named as
  the native fragment they equal;
* :mod:`pdi.interop.annotation`: W3C Web Annotations (and Hypothesis
  exports) of fragment names and citations, out and back in.

Edges of the archive: they read it, never write it.
"""
